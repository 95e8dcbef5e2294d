// SPDX-License-Identifier: Apache-2.0
// The CUDA toolkit the unit's JIT compiles with, judged against the GPUs, torch and FlashInfer:
// the version gates, the target architectures, the programs FLASHINFER_NVCC names, and the fix
// that pins a toolkit on the node passing every rule.
#include "rules/check_rules.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "catalog/cuda_arch.hpp"
#include "catalog/engines.hpp"
#include "catalog/flashinfer_arch_list.hpp"
#include "catalog/flashinfer_packages.hpp"
#include "catalog/node_health.hpp"
#include "catalog/torch_arch_list.hpp"
#include "engines/engine_argv.hpp"
#include "facts/node_fs.hpp"
#include "facts/python_env.hpp"
#include "plan/gpu_assignment.hpp"
#include "plan/launch_plan.hpp"
#include "profile/api_key.hpp"
#include "profile/service_user.hpp"
#include "rules/gpu_health.hpp"
#include "rules/installed_profiles.hpp"
#include "rules/jit_toolkit.hpp"
#include "rules/node_checks.hpp"
#include "util/version.hpp"

namespace gl::check_rules {
namespace {

constexpr std::string_view kNvccListSource = "nvcc --list-gpu-arch";

// The FlashInfer targets nvcc must compile: the arch list's entries (suffixed ones as written,
// the others normalised), else each GPU's, normalised with the version FlashInfer's gate reads
// from the root's nvcc. Unsuffixed 12.x below 12.9 has none: the gate rule reports it.
std::vector<FlashInferArch> flashinfer_targets(const Context& context, const Version& gate_nvcc) {
  std::vector<FlashInferArch> targets;
  auto add = [&](FlashInferArch arch) {
    if (!arch.suffix)
      if (auto normal = flashinfer_target(arch.capability, gate_nvcc)) arch = *normal;
    if (arch.suffix && std::ranges::find(targets, arch) == targets.end()) targets.push_back(arch);
  };
  if (context.arch_list_text) {
    if (context.arch_list)
      for (const auto& entry : *context.arch_list) add(entry);
  } else {
    for (auto capability : context.capabilities) add({capability, 0});
  }
  return targets;
}

// The arch list with each family target (`f`) made arch-specific (`a`), when `nvcc` compiles
// all of it; "" otherwise.
std::string arch_list_without_families(const Context& context, const Version& nvcc) {
  if (!context.arch_list_text || !context.arch_list) return "";
  std::string list;
  for (auto entry : *context.arch_list) {
    if (entry.suffix == 'f') entry.suffix = 'a';
    auto needed = min_nvcc_for_target(entry);
    if (entry.suffix && needed && nvcc < *needed) return "";
    list += (list.empty() ? "" : " ") + entry.text();
  }
  return list;
}

// The toolkit rules for one candidate: used on the toolkit the unit's JIT picks, and to find a
// toolkit on the node that satisfies all of them for the fix. `compiler` is the nvcc that
// compiles when FLASHINFER_NVCC names another (nullptr: the root's own); FlashInfer's version
// gate still asks the root's.
std::vector<Finding> toolkit_findings(const Context& context, const ToolkitFact& root,
                                      const std::string& how,
                                      const ToolkitFact* compiler = nullptr) {
  std::vector<Finding> findings;
  const ToolkitFact& toolkit = compiler ? *compiler : root;
  auto version = parse_version(toolkit.version().value_or(""));
  auto gate_version = parse_version(root.version().value_or(""));
  if (!version || !gate_version) return findings;
  const std::string where =
      toolkit_label(toolkit) + " (" + (compiler ? "FLASHINFER_NVCC; root " + root.root : how) + ")";
  for (auto capability : context.capabilities) {
    const int sm = capability.sm();
    bool listed = toolkit.archs && std::count(toolkit.archs->begin(), toolkit.archs->end(), sm);
    auto floor =
        toolkit.archs ? std::optional(toolkit.archs->front()) : lowest_sm_for(version->major);
    if (floor && sm < *floor && !listed) {
      findings.push_back(
          {Severity::error,
           "toolkit-dropped-arch",
           fmt::format("CUDA {} no longer compiles for compute capability {}",
                       version->major_minor(), capability_name(capability)),
           fmt::format("a CUDA {}.x toolkit starts at sm_{}", version->major, *floor),
           {{"gpus", gpus_text(context, capability)},
            {"toolkit", where},
            {"architectures", toolkit.archs ? toolkit.archs_source : "table"}},
           ""});
      continue;
    }
    auto needed = min_nvcc_for(capability);
    // A list nvcc printed knows every architecture; the catalog's knows only its own rows, so a
    // GPU newer than the catalog is judged by nothing rather than called unsupported.
    bool list_decides = toolkit.archs && (needed || toolkit.archs_source == kNvccListSource);
    bool too_old = list_decides ? !listed : (needed && *version < *needed);
    if (too_old)
      findings.push_back(
          {Severity::error,
           "toolkit-too-old-for-arch",
           fmt::format("nvcc {} at {} cannot compile for compute capability {}",
                       version->major_minor(), toolkit.nvcc, capability_name(capability)),
           needed ? fmt::format("{} needs nvcc >= {}", sm_name(capability), needed->major_minor())
                  : sm_name(capability) + " is missing from nvcc --list-gpu-arch",
           {{"gpus", gpus_text(context, capability)}, {"toolkit", where}},
           ""});
  }
  auto flashinfer = package_version(context, "flashinfer");
  if (flashinfer) {
    // The capabilities FlashInfer normalises itself: the list's unsuffixed entries, else the GPUs.
    std::vector<ComputeCapability> normalised;
    if (!context.arch_list_text)
      normalised = context.capabilities;
    else if (context.arch_list)
      for (const auto& entry : *context.arch_list)
        if (!entry.suffix) normalised.push_back(entry.capability);
    for (const auto& gate : jit_gates()) {
      if (gate.package != "flashinfer") continue;
      auto library = parse_version(*flashinfer);
      if (!library || *library < gate.since || !(*gate_version < gate.min_nvcc)) continue;
      // Past the releases the gate was read in, it may be gone: said, not refused.
      const bool verified = *library <= gate.verified_through;
      const std::string since = gate.since.major_minor() + "." + std::to_string(gate.since.patch);
      const std::string read_in = since + " to " + gate.verified_through.str();
      for (auto capability : normalised) {
        if (capability.major != gate.arch_major) continue;
        Finding finding{
            Severity::error,
            "flashinfer-nvcc-too-old",
            fmt::format("FlashInfer {} refuses compute capability {}.{} with nvcc {} at {}: its "
                        "JIT ends up with no target architecture and the server dies with "
                        "\"FlashInfer requires GPUs with sm75 or higher\"",
                        *flashinfer, capability.major, capability.minor,
                        gate_version->major_minor(), root.nvcc),
            fmt::format("FlashInfer >= {} with a {}.x GPU needs nvcc >= {} ({})", since,
                        gate.arch_major, gate.min_nvcc.major_minor(), gate.reference),
            {{context.arch_list_text ? "toolkit.arch_list" : "gpus",
              context.arch_list_text ? *context.arch_list_text : gpus_text(context, capability)},
             {"toolkit", toolkit_label(root) + " (" + how + ")"},
             {"flashinfer", *flashinfer}},
            ""};
        if (!verified) {
          finding.severity = Severity::warning;
          finding.code = "flashinfer-nvcc-gate-unverified";
          finding.summary = fmt::format(
              "FlashInfer {} is newer than the releases whose nvcc gate the catalog read ({}): "
              "those refuse compute capability {}.{} with nvcc {} at {}; this one may not",
              *flashinfer, read_in, capability.major, capability.minor, gate_version->major_minor(),
              root.nvcc);
          finding.rule = fmt::format("FlashInfer {} with a {}.x GPU needs nvcc >= {} ({}); {}",
                                     read_in, gate.arch_major, gate.min_nvcc.major_minor(),
                                     gate.reference, gate.changed_by);
          // The fix (a toolkit passing the gate) is safe whether or not this release kept it.
          finding.facts.push_back({"verified through", gate.verified_through.str()});
        }
        findings.push_back(std::move(finding));
      }
    }
    // A suffixed target needs more than its architecture: `f` needs nvcc 12.9.
    for (const auto& target : flashinfer_targets(context, *gate_version)) {
      auto needed = min_nvcc_for_target(target);
      if (!needed || !(*version < *needed)) continue;
      auto arch_needed = min_nvcc_for(target.capability);
      bool on_gpu = std::ranges::count(context.capabilities, target.capability) > 0;
      if (on_gpu && arch_needed && *version < *arch_needed) continue;  // reported above
      Finding finding{
          Severity::error,
          "flashinfer-target-needs-newer-nvcc",
          fmt::format("FlashInfer would compile for {} with nvcc {} at {}, which has no such "
                      "target",
                      target.target(), version->major_minor(), toolkit.nvcc),
          fmt::format("{} needs nvcc >= {}{}", target.target(), needed->major_minor(),
                      target.suffix == 'f' ? " (family targets arrived with CUDA 12.9)" : ""),
          {{"target", target.text() + (context.arch_list_text ? " (toolkit.arch_list)"
                                                              : " (FlashInfer, from the GPUs)")},
           {"toolkit", where}},
          ""};
      if (auto list = arch_list_without_families(context, *version); !list.empty())
        finding.fix = fmt::format("; or toolkit.arch_list = \"{}\" (nvcc {} has those targets)",
                                  list, version->major_minor());
      findings.push_back(std::move(finding));
    }
  }
  if (auto torch_major =
          major_of(context.facts.python ? context.facts.python->torch_cuda : std::nullopt);
      torch_major && *torch_major != version->major)
    findings.push_back({Severity::error,
                        "torch-toolkit-major-mismatch",
                        fmt::format("torch is built for CUDA {} but the JIT compiles with nvcc {}",
                                    *context.facts.python->torch_cuda, version->major_minor()),
                        "extensions compiled by nvcc must match torch's CUDA major version",
                        {{"torch", context.facts.python->torch_version.value_or("?") + " (CUDA " +
                                       *context.facts.python->torch_cuda + ")"},
                         {"toolkit", where}},
                        ""});
  if (auto driver_major = major_of(context.facts.driver.max_cuda);
      driver_major && *driver_major < version->major) {
    auto branch = min_driver_for(version->major);
    findings.push_back({Severity::error,
                        "driver-too-old-for-toolkit",
                        fmt::format("the driver runs CUDA up to {}, the toolkit is CUDA {}",
                                    *context.facts.driver.max_cuda, version->major_minor()),
                        branch
                            ? fmt::format("CUDA {}.x needs driver >= {}", version->major, *branch)
                            : "the driver's CUDA version must be at least the toolkit's major",
                        {{"driver", context.facts.driver.version.value_or("?") + " (CUDA " +
                                        *context.facts.driver.max_cuda + ")"},
                         {"toolkit", where}},
                        ""});
  }
  if (const auto& minimum = context.profile.toolkit.min_version) {
    auto wanted = parse_version(*minimum);
    if (wanted && *version < *wanted)
      findings.push_back({Severity::error,
                          "toolkit-below-min-version",
                          fmt::format("nvcc {} is below the profile's toolkit.min_version {}",
                                      version->major_minor(), *minimum),
                          "toolkit.min_version in the profile",
                          {{"toolkit", where}, {"toolkit.min_version", *minimum}},
                          ""});
  }
  return findings;
}

// The toolkit on the node that passes every toolkit rule: the profile's own if it does, else
// the newest, preferring a versioned directory over a symlink that may move.
const ToolkitFact* best_toolkit(const Context& context) {
  const ToolkitFact* best = nullptr;
  auto rank = [&](const ToolkitFact& toolkit) {
    bool own = context.profile.toolkit.cuda_home &&
               normal_path(*context.profile.toolkit.cuda_home) == toolkit.root;
    bool stable = toolkit.root == toolkit.resolved_root;
    bool system = toolkit.root.rfind("/usr/local/cuda", 0) == 0;
    return std::tuple(own, parse_version(toolkit.version().value_or("")).value_or(Version{}),
                      stable, system);
  };
  for (const auto& toolkit : context.facts.toolkits) {
    if (!toolkit.nvcc_exists || !toolkit.version() || toolkit.root == "/") continue;
    // Only a root whose bin/nvcc this is, with the runtime the JIT links, can be pinned.
    if (toolkit.nvcc != toolkit.root + "/bin/nvcc" || !toolkit.not_toolkit_root_reason().empty())
      continue;
    if (!toolkit_findings(context, toolkit, "").empty()) continue;
    if (!best || rank(toolkit) > rank(*best)) best = &toolkit;
  }
  return best;
}

// A release NVIDIA ships, as the unit's JIT would see it pinned at its root (what its nvcc
// compiles for from the arch table).
ToolkitFact release_toolkit(const ToolkitRelease& release) {
  ToolkitFact toolkit;
  toolkit.root = release.root();
  toolkit.resolved_root = toolkit.root;
  toolkit.nvcc = toolkit.root + "/bin/nvcc";
  toolkit.root_exists = toolkit.nvcc_exists = true;
  toolkit.nvcc_version = release.version.major_minor();
  toolkit.archs = archs_for_nvcc(release.version);
  toolkit.archs_source = "catalog for CUDA " + release.version.major_minor();
  return toolkit;
}

// Nothing on the node passes: the lowest release that passes every toolkit rule here (the GPUs'
// architectures, FlashInfer's gate, torch's CUDA major, the driver's CUDA, toolkit.min_version),
// judged by the same rules before it is named; where none does, what the nearest still breaks.
std::string toolkit_fix(const Context& context, const ToolkitFact* best) {
  if (best)
    return pin_fix(best->root) +
           fmt::format("; nvcc {} there satisfies every rule", best->version().value_or("?"));
  const ToolkitRelease* nearest = nullptr;
  std::vector<Finding> still;
  for (const auto& release : toolkit_releases()) {
    auto broken = toolkit_findings(context, release_toolkit(release), "");
    if (broken.empty())
      return fmt::format(
          "no toolkit on this node satisfies every rule: install {} (nvcc {} passes every rule "
          "on this node) and pin it: {}",
          release.package(), release.version.major_minor(), pin_fix(release.root()));
    if (!nearest || broken.size() <= still.size()) {
      nearest = &release;
      still = std::move(broken);
    }
  }
  std::vector<std::string> codes;
  for (const auto& finding : still) codes.push_back(finding.code);
  return fmt::format(
      "no CUDA toolkit satisfies every rule on this node: even {} (nvcc {}) breaks {}; change "
      "what those rules name first (the driver, torch's CUDA build or the GPUs)",
      nearest->package(), nearest->version.major_minor(), fmt::join(codes, ", "));
}

// FLASHINFER_NVCC and FLASHINFER_NVCC_LAUNCHER name programs every JIT compile runs (ninja's
// `$nvcc_launcher $nvcc ...`): one the unit's shell cannot find fails each build. gpulaunch never
// runs the launcher (SECURITY.md: root runs nothing the engine's user controls), so what it does
// to the compile is not judged; the rules judge FLASHINFER_NVCC, or the root's nvcc.
void check_jit_programs(const Context& context, const LaunchPlan& plan, const JitPick& pick,
                        std::vector<Finding>& findings) {
  for (auto [variable, program] :
       {std::pair<std::string_view, std::string>{"FLASHINFER_NVCC", pick.nvcc_override},
        {"FLASHINFER_NVCC_LAUNCHER", pick.launcher.value_or("")}}) {
    if (program.empty() || (variable == "FLASHINFER_NVCC" && pick.compiler)) continue;
    auto candidates = program_candidates(plan.environment, program);
    bool found = false, judged = false;
    for (const auto& candidate : candidates)
      if (const PathFact* fact = context.facts.path(normal_path(candidate))) {
        judged = true;
        found = found || fact->executable;
      }
    if (!judged || found) continue;
    add(findings,
        {Severity::error,
         variable == "FLASHINFER_NVCC" ? "flashinfer-nvcc-missing"
                                       : "flashinfer-nvcc-launcher-missing",
         fmt::format("{} names '{}', which is not an executable file{}", variable, program,
                     program.find('/') == std::string::npos ? " on the unit's PATH" : ""),
         "FlashInfer runs it for every kernel it compiles at start "
         "(flashinfer/jit/cpp_ext.py)",
         {{std::string(variable), *lookup(plan.environment, variable)}},
         fmt::format("install it, give its absolute path, or remove {} from [env]", variable)});
  }
}

}  // namespace

namespace {

// The torch the engine runs on, against the driver: a venv's, or an image's (its Python is
// Facts::python).
void check_torch_build(const Context& context, std::vector<Finding>& findings) {
  const auto& profile = context.profile;
  const auto& facts = context.facts;
  // An engine in a Python package runs on torch; a command may not.
  if (facts.python && facts.python->torch_version && !facts.python->torch_cuda &&
      !engine_row(profile.engine.kind).import_module.empty())
    add(findings, {Severity::error,
                   "torch-cpu-only",
                   fmt::format("torch {} is a CPU-only build", *facts.python->torch_version),
                   "the engine needs a CUDA build of torch",
                   {{"torch", *facts.python->torch_version}, {"venv", facts.python->prefix}},
                   "install a CUDA build of torch matching the toolkit (e.g. +cu130)"});
  // An image's torch is judged with the compat libcuda it carries (image_rules).
  if (auto torch_major = major_of(facts.python ? facts.python->torch_cuda : std::nullopt);
      torch_major && !facts.image) {
    auto driver_major = major_of(facts.driver.max_cuda);
    if (driver_major && *driver_major < *torch_major)
      add(findings,
          {Severity::error,
           "driver-too-old-for-torch",
           fmt::format("the driver runs CUDA up to {}, torch is built for CUDA {}",
                       *facts.driver.max_cuda, *facts.python->torch_cuda),
           "the driver's CUDA version must be at least torch's major",
           {{"driver", facts.driver.version.value_or("?")}, {"torch", *facts.python->torch_cuda}},
           fmt::format("upgrade the driver (>= {} for CUDA {}) or install torch for CUDA {}",
                       min_driver_for(*torch_major).value_or(0), *torch_major, *driver_major)});
  }
}

// TORCH_CUDA_ARCH_LIST as the unit sets it, against the torch the engine imports: a CUDA build of
// a release known to refuse an entry raises "Unknown CUDA arch" on its first CUDA extension
// (catalog/torch_arch_list). A CPU build never compiles CUDA sources; a release newer than what
// was read is not judged.
void check_torch_arch_list(const Context& context, const LaunchPlan& plan,
                           std::vector<Finding>& findings) {
  const auto& python = context.facts.python;
  auto value = lookup(plan.environment, "TORCH_CUDA_ARCH_LIST");
  if (!value || !python || !python->torch_version || !python->torch_cuda) return;
  auto torch = parse_version(*python->torch_version);
  if (!torch) return;
  for (const RefusedTorchArch& refused : torch_refused_arches(*value, *torch)) {
    const std::string bare = std::string(refused.row->entry);
    add(findings,
        {Severity::warning,
         "torch-arch-unknown",
         fmt::format("torch {} does not know CUDA arch {} (TORCH_CUDA_ARCH_LIST=\"{}\")",
                     *python->torch_version, refused.entry, *value),
         fmt::format("torch's cpp_extension raises \"Unknown CUDA arch ({}) or GPU not supported\" "
                     "when it builds an extension with CUDA sources; torch {} and older lack it",
                     refused.entry, refused.row->absent_through),
         {{"torch", *python->torch_version + " (" + python->prefix + ")"},
          {"TORCH_CUDA_ARCH_LIST", *value},
          {"toolkit.arch_list", context.profile.toolkit.arch_list.value_or("")},
          {"read in", std::string(refused.row->source)}},
         refused.row->present_from.empty()
             ? fmt::format("drop {} from toolkit.arch_list, or install a torch whose "
                           "torch/utils/cpp_extension.py lists '{}'",
                           bare, bare)
             : fmt::format("install torch >= {} (built for the toolkit's CUDA major) in {}, or "
                           "drop {} from toolkit.arch_list",
                           refused.row->present_from, python->prefix, bare)});
  }
}

}  // namespace

void check_toolkit(const Context& context, const LaunchPlan& plan, const ShellEnvironment& shell,
                   std::vector<Finding>& findings) {
  const auto& profile = context.profile;
  const auto& facts = context.facts;
  // An image's JIT compiles with the image's toolkit, not one of this host's.
  if (profile.engine.image) {
    check_torch_build(context, findings);
    check_torch_arch_list(context, plan, findings);
    return;
  }
  const ToolkitFact* best = best_toolkit(context);
  const std::string fix = toolkit_fix(context, best);
  auto unit_pick = pick_jit_toolkit(plan.environment, facts);

  if (const auto& home = profile.toolkit.cuda_home) {
    const ToolkitFact* own = facts.toolkit_with_nvcc(normal_path(*home) + "/bin/nvcc");
    if (own && !own->root_exists)
      add(findings, {Severity::error,
                     "cuda-home-missing",
                     fmt::format("toolkit.cuda_home '{}' does not exist", *home),
                     "toolkit.cuda_home must be a CUDA toolkit root",
                     {{"toolkit.cuda_home", *home}},
                     fix});
    else if (own && !own->nvcc_exists)
      add(findings, {Severity::error,
                     "cuda-home-not-toolkit",
                     fmt::format("toolkit.cuda_home '{}' has no bin/nvcc", *home),
                     "toolkit.cuda_home must be a CUDA toolkit root (bin/nvcc, include/cuda.h)",
                     {{"toolkit.cuda_home", *home}},
                     fix});
    else if (own && !own->not_toolkit_root_reason().empty())
      add(findings, {Severity::error,
                     "cuda-home-not-toolkit",
                     fmt::format("toolkit.cuda_home '{}' is not a toolkit root: {}", *home,
                                 own->not_toolkit_root_reason()),
                     "the JIT links with -L$CUDA_HOME/lib64 -lcudart and includes "
                     "$CUDA_HOME/include (flashinfer/jit/cpp_ext.py, torch's cpp_extension)",
                     {{"toolkit.cuda_home", *home}},
                     fix});
    if (unit_pick.root != normal_path(*home) &&
        !(unit_pick.toolkit && own && unit_pick.toolkit->resolved_root == own->resolved_root))
      add(findings, {Severity::error,
                     "jit-toolkit-mismatch",
                     fmt::format("the unit's JIT would use the toolkit at '{}' ({}), not "
                                 "toolkit.cuda_home '{}'",
                                 unit_pick.root, unit_pick.how, *home),
                     "the toolkit a JIT library finds in the unit's environment "
                     "(CUDA_HOME, CUDA_PATH, which nvcc, /usr/local/cuda) must be the profile's",
                     {{"toolkit.cuda_home", *home},
                      {"JIT picks", unit_pick.root + " (" + unit_pick.how + ")"}},
                     "remove CUDA_HOME/CUDA_PATH/PATH overrides from [env]"});
  } else {
    add(findings,
        {Severity::warning,
         "cuda-home-unset",
         "toolkit.cuda_home is not set: the unit's JIT takes whatever nvcc it finds" +
             (unit_pick.root.empty() ? std::string()
                                     : " (now " + unit_pick.root + ", " + unit_pick.how + ")"),
         "pin the toolkit so a package upgrade or PATH change cannot swap it",
         {{"JIT picks",
           unit_pick.root.empty() ? "nothing" : unit_pick.root + " (" + unit_pick.how + ")"}},
         fix});
    // Two levels above an nvcc wrapper (/usr/local/bin/nvcc -> /usr/local) has no runtime.
    if (unit_pick.usable() && !unit_pick.toolkit->not_toolkit_root_reason().empty())
      add(findings,
          {Severity::error,
           "jit-cuda-home-not-toolkit",
           fmt::format("the unit's JIT would take CUDA_HOME = '{}' ({}), which is not a toolkit "
                       "root: {}",
                       unit_pick.root, unit_pick.how, unit_pick.toolkit->not_toolkit_root_reason()),
           "FlashInfer and torch take two directories above `which nvcc` without following "
           "links, then link with -L$CUDA_HOME/lib64 -lcudart and include $CUDA_HOME/include",
           {{"JIT picks", unit_pick.root + " (" + unit_pick.how + ")"},
            {"nvcc resolves to", unit_pick.toolkit->resolved_root + "/bin/nvcc"}},
           fix});
  }

  check_jit_programs(context, plan, unit_pick, findings);
  if (!unit_pick.usable()) {
    bool known_broken =
        profile.toolkit.cuda_home && unit_pick.root == normal_path(*profile.toolkit.cuda_home);
    if (!known_broken)
      add(findings, {Severity::error,
                     "no-toolkit",
                     "the unit's JIT finds no working nvcc" +
                         (unit_pick.root.empty()
                              ? std::string()
                              : " (tried '" + unit_pick.root + "', " + unit_pick.how + ")"),
                     "FlashInfer and torch extensions compile kernels with nvcc at start",
                     {{"JIT picks", unit_pick.root.empty() ? "nothing" : unit_pick.root}},
                     fix});
  } else {
    const ToolkitFact* compiler = unit_pick.compiler && unit_pick.compiler != unit_pick.toolkit
                                      ? unit_pick.compiler
                                      : nullptr;
    const std::string compiler_fix = "point FLASHINFER_NVCC in [env] at an nvcc that passes" +
                                     (best ? " (" + best->root + "/bin/nvcc)" : std::string()) +
                                     ", or remove it";
    for (auto& finding :
         toolkit_findings(context, *unit_pick.toolkit,
                          "the unit's JIT finds it by " + unit_pick.how, compiler)) {
      bool compiler_side = compiler && !finding.code.starts_with("flashinfer-nvcc-");
      finding.fix = (compiler_side ? compiler_fix : fix) + finding.fix;
      add(findings, std::move(finding));
    }
  }

  auto shell_pick = pick_jit_toolkit(shell.variables, facts);
  if (unit_pick.usable() && shell_pick.usable() &&
      shell_pick.toolkit->resolved_root != unit_pick.toolkit->resolved_root) {
    // Never advise a CUDA_HOME that is not a toolkit root, even the unit's own.
    const bool unit_is_root = unit_pick.toolkit->not_toolkit_root_reason().empty();
    add(findings,
        {Severity::warning,
         "jit-toolkit-shell-mismatch",
         fmt::format("a JIT run from this shell would use {} ({}), the unit uses {} ({})",
                     toolkit_label(*shell_pick.toolkit), shell_pick.how,
                     toolkit_label(*unit_pick.toolkit), unit_pick.how),
         "reproducing a failure by hand needs the unit's toolkit",
         {{"shell", shell_pick.root}, {"unit", unit_pick.root}},
         // `gpulaunch exec` runs the command with the unit's whole environment, user and
         // sandbox, not only its CUDA_HOME.
         unit_is_root ? "reproduce it as the unit runs: gpulaunch exec " + profile.name + " -- CMD"
         : best       ? "pin the unit's toolkit first (" + pin_fix(best->root) +
                      "), then reproduce it as the unit runs: gpulaunch exec " + profile.name +
                      " -- CMD"
                : fix});
  }
  check_torch_build(context, findings);
  check_torch_arch_list(context, plan, findings);
}

// No profile: every GPU of the node, no Python environment, no toolkit.min_version. The node's
// toolkits are judged by the same toolkit_findings the unit's toolkit meets; a warning each, since
// a job may bring its own toolkit (a venv's nvcc wheel, a container).
void check_node_toolkits(const Facts& facts, std::vector<Finding>& findings) {
  static const Profile kNoProfile{};
  Context context{kNoProfile, facts, {}, {}, std::nullopt, {}};
  std::set<ComputeCapability> distinct;
  for (const auto& gpu : facts.gpus) {
    context.gpus.push_back(&gpu);
    distinct.insert({gpu.cc_major, gpu.cc_minor});
  }
  context.capabilities.assign(distinct.begin(), distinct.end());
  const ToolkitFact* best = best_toolkit(context);
  std::set<std::string> judged;
  for (const auto& toolkit : facts.toolkits) {
    if (!toolkit.nvcc_exists || !toolkit.version()) continue;
    const std::string& real = toolkit.resolved_root.empty() ? toolkit.root : toolkit.resolved_root;
    if (!judged.insert(real).second) continue;
    const std::string fix =
        best ? fmt::format(
                   "jobs on this node should compile with {} (CUDA_HOME={}: nvcc {} there "
                   "passes every rule on this node), or remove {}",
                   best->root, best->root, best->version().value_or("?"), toolkit.root)
             : toolkit_fix(context, nullptr);
    for (auto& finding : toolkit_findings(
             context, toolkit,
             "on this node: " + fmt::format("{}", fmt::join(toolkit.found_via, ", ")))) {
      finding.severity = Severity::warning;
      finding.fix = fix + finding.fix;
      add(findings, std::move(finding));
    }
  }
}

}  // namespace gl::check_rules
