// SPDX-License-Identifier: Apache-2.0
#include "rules/check.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "catalog/cuda_arch.hpp"
#include "catalog/engines.hpp"
#include "catalog/flashinfer_arch_list.hpp"
#include "catalog/flashinfer_packages.hpp"
#include "catalog/node_health.hpp"
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

namespace gl {
namespace {

constexpr std::string_view kNvccListSource = "nvcc --list-gpu-arch";

std::string quoted(const std::string& value) {
  return "\"" + value + "\"";
}

std::string pin_fix(const std::string& root) {
  return "toolkit.cuda_home = " + quoted(root) +
         " (then clear the FlashInfer JIT cache: its entries are not keyed on the toolkit)";
}

std::string sm_name(ComputeCapability capability) {
  return "sm_" + std::to_string(capability.sm());
}
std::string capability_name(ComputeCapability capability) {
  return fmt::format("{}.{} ({})", capability.major, capability.minor, sm_name(capability));
}

std::optional<int> major_of(const std::optional<std::string>& version) {
  if (!version) return std::nullopt;
  auto parsed = parse_version(*version);
  return parsed ? std::optional(parsed->major) : std::nullopt;
}

std::string toolkit_label(const ToolkitFact& toolkit) {
  return fmt::format("nvcc {} at {}", toolkit.version().value_or("?"), toolkit.nvcc);
}

const GpuFact* mig_mode_gpu(const Facts& facts) {
  for (const auto& gpu : facts.gpus)
    if (gpu.mig) return &gpu;
  return nullptr;
}

// What the rules need besides the raw facts, computed once.
struct Context {
  const Profile& profile;
  const Facts& facts;
  std::vector<const GpuFact*> gpus;             // the ones the engine gets
  std::vector<ComputeCapability> capabilities;  // distinct, ascending
  // FLASHINFER_CUDA_ARCH_LIST in the unit: FlashInfer compiles for these instead of the GPUs.
  std::optional<std::string> arch_list_text;
  std::expected<std::vector<FlashInferArch>, ArchListError> arch_list;
};

Context make_context(const Profile& profile, const Facts& facts, const LaunchPlan& plan) {
  Context context{profile, facts, assigned_gpu_facts(plan.gpus, facts), {}, std::nullopt, {}};
  // Facts list GPUs, not MIG instances: a MIG- device stands for a GPU in MIG mode (its
  // capability is the parent's).
  const GpuFact* mig_parent = mig_mode_gpu(facts);
  for (const auto& device : plan.gpus)
    if (device.starts_with("MIG-") && mig_parent) context.gpus.push_back(mig_parent);
  std::set<ComputeCapability> distinct;
  for (const auto* gpu : context.gpus) distinct.insert({gpu->cc_major, gpu->cc_minor});
  context.capabilities.assign(distinct.begin(), distinct.end());
  context.arch_list_text = lookup(plan.environment, "FLASHINFER_CUDA_ARCH_LIST");
  if (context.arch_list_text)
    context.arch_list = parse_flashinfer_arch_list(*context.arch_list_text);
  return context;
}

// The package version the rules know FlashInfer by, if installed.
std::optional<std::string> package_version(const Context& context, const std::string& name) {
  if (!context.facts.python) return std::nullopt;
  auto found = context.facts.python->packages.find(name);
  if (found == context.facts.python->packages.end()) return std::nullopt;
  return found->second;
}

std::string gpus_text(const Context& context, ComputeCapability capability) {
  std::vector<int> indices;
  std::string name;
  for (const auto* gpu : context.gpus)
    if (gpu->cc_major == capability.major && gpu->cc_minor == capability.minor) {
      indices.push_back(gpu->index);
      name = gpu->name;
    }
  std::string list;
  for (int index : indices) list += (list.empty() ? "" : ",") + std::to_string(index);
  return fmt::format("{} x {} (GPU {}), compute capability {}", indices.size(), name, list,
                     capability_name(capability));
}

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
      for (auto capability : normalised) {
        if (capability.major != gate.arch_major) continue;
        findings.push_back(
            {Severity::error,
             "flashinfer-nvcc-too-old",
             fmt::format(
                 "FlashInfer {} refuses compute capability {}.{} with nvcc {} at {}: its JIT "
                 "ends up with no target architecture and the server dies with "
                 "\"FlashInfer requires GPUs with sm75 or higher\"",
                 *flashinfer, capability.major, capability.minor, gate_version->major_minor(),
                 root.nvcc),
             fmt::format("FlashInfer >= {} with a {}.x GPU needs nvcc >= {} ({})",
                         gate.since.major_minor() + "." + std::to_string(gate.since.patch),
                         gate.arch_major, gate.min_nvcc.major_minor(), gate.reference),
             {{context.arch_list_text ? "toolkit.arch_list" : "gpus",
               context.arch_list_text ? *context.arch_list_text : gpus_text(context, capability)},
              {"toolkit", toolkit_label(root) + " (" + how + ")"},
              {"flashinfer", *flashinfer}},
             ""});
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

std::string toolkit_fix(const Context& context, const ToolkitFact* best) {
  if (best)
    return pin_fix(best->root) +
           fmt::format("; nvcc {} there satisfies every rule", best->version().value_or("?"));
  std::optional<Version> needed;
  for (auto capability : context.capabilities)
    if (auto version = min_nvcc_for(capability); version && (!needed || *version > *needed))
      needed = version;
  return fmt::format(
      "no toolkit on this node satisfies every rule: install one{} whose major "
      "matches torch's CUDA (e.g. cuda-nvcc-13-0) and pin it as toolkit.cuda_home",
      needed ? " >= " + needed->major_minor() : std::string());
}

void add(std::vector<Finding>& findings, Finding finding) {
  findings.push_back(std::move(finding));
}

// The GPUs the driver cannot reach (NVML's or nvidia-smi's "GPU is lost", Xid 79 at an address
// no GPU answers at now): empty when none.
std::vector<std::string> lost_gpus(const Facts& facts) {
  std::vector<std::string> lost = facts.driver.lost_gpus;
  for (const auto& event : facts.node_health.xids)
    if (event.xid == kXidFallenOffTheBus && !event.gpu) {
      std::string where = "PCI:" + event.pci;
      if (std::ranges::find(lost, where) == lost.end()) lost.push_back(where);
    }
  return lost;
}

// A lost GPU is named as lost with the reboot fix, never as too few GPUs for the ranks.
bool check_lost_gpus(const Context& context, std::vector<Finding>& findings) {
  const auto& facts = context.facts;
  const bool init_lost = facts.driver.nvml_error == kNvmlErrorGpuIsLost;
  const auto lost = lost_gpus(facts);
  if (!init_lost && lost.empty()) return false;
  std::string where = init_lost && lost.empty() ? "a GPU (nvmlInit_v2)" : "";
  for (const auto& gpu : lost) where += (where.empty() ? "" : ", ") + gpu;
  add(findings, {Severity::error,
                 "gpu-lost",
                 fmt::format("{} fell off the bus: the driver cannot reach {} ({})", where,
                             lost.size() > 1 ? "them" : "it", kNvmlGpuIsLostText),
                 fmt::format("every GPU of the node must answer the driver; a lost one is "
                             "present but unreachable ({})",
                             kGpuLostSource),
                 {{"lost", where},
                  {"gpus answering", std::to_string(facts.gpus.size())},
                  {"needed per node", std::to_string(context.profile.gpus_per_node())}},
                 std::string(kGpuLostFix)});
  return true;
}

void check_gpus(const Context& context, std::vector<Finding>& findings) {
  const auto& facts = context.facts;
  const auto& profile = context.profile;
  const bool lost = check_lost_gpus(context, findings);
  if (!facts.driver.present) {
    if (lost) return;
    // The driver is there but its libraries are another version: rules/gpu_health says so.
    if (driver_library_mismatch(facts.driver)) return;
    std::string why;
    for (const auto& problem : facts.driver.problems) why += (why.empty() ? "" : "; ") + problem;
    add(findings,
        {Severity::error,
         "no-nvidia-driver",
         "no usable NVIDIA driver on this node",
         "the engine needs the NVIDIA driver (NVML or nvidia-smi must answer)",
         {{"driver",
           facts.driver.source + (facts.driver.version ? " " + *facts.driver.version : "")},
          {"probes", why}},
         "install the NVIDIA driver (>= 580 for CUDA 13) and check that `nvidia-smi` works"});
    return;
  }
  for (const auto& device : profile.gpus.devices)
    if (!lost && !(device.starts_with("MIG-") && mig_mode_gpu(facts)) &&
        std::none_of(facts.gpus.begin(), facts.gpus.end(),
                     [&](const GpuFact& gpu) { return names_gpu(device, gpu); }))
      add(findings, {Severity::error,
                     "gpu-device-missing",
                     fmt::format("GPU '{}' named in gpus.devices is not on this node", device),
                     "every entry of gpus.devices must be a GPU index or UUID of this node",
                     {{"gpus.devices", device}, {"gpus found", std::to_string(facts.gpus.size())}},
                     "fix gpus.devices (see `gpulaunch facts`)"});
  long long needed = profile.gpus_per_node();
  long long available = static_cast<long long>(context.gpus.size());
  if (available < needed && !lost)
    add(findings, {Severity::error,
                   "gpu-count-short",
                   fmt::format("the profile needs {} GPUs per node ({}), {} available", needed,
                               profile.world_text(), available),
                   "a node must have one GPU for each of its ranks",
                   {{"gpus needed", std::to_string(needed)},
                    {"gpus available", std::to_string(available)},
                    {"gpus on node", std::to_string(facts.gpus.size())}},
                   "lower parallelism.tp/pp/dp or run on a node with enough GPUs"});
  // A GPU in MIG mode runs CUDA only in its MIG instances (catalog/engines, MigSupport).
  const EngineRow& engine = engine_row(profile.engine.kind);
  std::set<int> reported;
  for (const GpuFact* gpu : context.gpus) {
    if (!gpu->mig || !reported.insert(gpu->index).second) continue;
    const bool named_instance = std::ranges::any_of(
        profile.gpus.devices, [](const std::string& device) { return device.starts_with("MIG-"); });
    if (engine.mig == MigSupport::none)
      add(findings,
          {Severity::error,
           "gpu-mig-engine-unsupported",
           fmt::format("GPU {} ({}) is in MIG mode, and engine.kind = \"{}\" cannot run on a MIG "
                       "instance",
                       gpu->index, gpu->name, engine.name),
           std::string(engine.mig_source),
           {{"gpu", fmt::format("{} {} (MIG mode on)", gpu->index, gpu->uuid)},
            {"engine.kind", std::string(engine.name)}},
           fmt::format("give the engine a GPU without MIG (gpus.devices), or turn MIG off on this "
                       "one: `nvidia-smi -i {} -mig 0` (as root, with no process on it)",
                       gpu->index)});
    else if (!named_instance)
      add(findings,
          {Severity::error,
           "gpu-mig-whole-gpu",
           fmt::format("GPU {} ({}) is in MIG mode: CUDA cannot use it as a whole GPU", gpu->index,
                       gpu->name),
           "a GPU in MIG mode runs CUDA only in its MIG instances, one per process (NVIDIA MIG "
           "user guide)",
           {{"gpu", fmt::format("{} {} (MIG mode on)", gpu->index, gpu->uuid)}},
           "name one MIG instance in gpus.devices (`nvidia-smi -L` lists their MIG- UUIDs) with "
           "one rank, or turn MIG off on this GPU"});
  }
  if (context.capabilities.size() > 1) {
    std::string list;
    for (auto capability : context.capabilities)
      list += (list.empty() ? "" : ", ") + capability_name(capability);
    add(findings, {Severity::error,
                   "gpu-arch-mixed",
                   "the engine's GPUs have different architectures: " + list,
                   "tensor/pipeline parallel ranks must run on one GPU architecture",
                   {{"architectures", list}},
                   "select GPUs of one architecture with gpus.devices"});
  }
  if (const auto& expected = profile.gpus.arch) {
    auto wanted = parse_version(*expected);
    for (auto capability : context.capabilities)
      if (wanted && (wanted->major != capability.major || wanted->minor != capability.minor))
        add(findings, {Severity::error,
                       "gpu-arch-unexpected",
                       fmt::format("gpus.arch is {} but the GPUs are {}", *expected,
                                   capability_name(capability)),
                       "gpus.arch states the compute capability the profile was built for",
                       {{"gpus.arch", *expected}, {"gpus", gpus_text(context, capability)}},
                       "run on the intended GPUs or update gpus.arch"});
  }
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

void check_toolkit(const Context& context, const LaunchPlan& plan, const ShellEnvironment& shell,
                   std::vector<Finding>& findings) {
  const auto& profile = context.profile;
  const auto& facts = context.facts;
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
      bool compiler_side = compiler && finding.code != "flashinfer-nvcc-too-old";
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

  // An engine in a Python package runs on torch; a command may not.
  if (facts.python && facts.python->torch_version && !facts.python->torch_cuda &&
      !engine_row(profile.engine.kind).import_module.empty())
    add(findings, {Severity::error,
                   "torch-cpu-only",
                   fmt::format("torch {} is a CPU-only build", *facts.python->torch_version),
                   "the engine needs a CUDA build of torch",
                   {{"torch", *facts.python->torch_version}, {"venv", facts.python->prefix}},
                   "install a CUDA build of torch matching the toolkit (e.g. +cu130)"});
  if (auto torch_major = major_of(facts.python ? facts.python->torch_cuda : std::nullopt);
      torch_major) {
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

// flashinfer-cubin and flashinfer-jit-cache must carry flashinfer-python's version, or
// `import flashinfer` raises (catalog/flashinfer_packages).
void check_flashinfer_packages(const Context& context, const LaunchPlan& plan,
                               std::vector<Finding>& findings) {
  auto flashinfer = package_version(context, "flashinfer");
  if (!flashinfer || lookup(plan.environment, kFlashInferDisableVersionCheck)) return;
  const std::string public_version = flashinfer->substr(0, flashinfer->find('+'));
  for (const auto& row : flashinfer_companions()) {
    auto companion = package_version(context, std::string(row.dist));
    if (!companion || flashinfer_companion_matches(row, *flashinfer, *companion)) continue;
    if (!row.skipped_by.empty() && lookup(plan.environment, row.skipped_by)) continue;
    const auto& python = *context.facts.python;
    auto label = row.per_cuda ? cuda_wheel_label(*companion, python.torch_cuda) : std::nullopt;
    if (row.per_cuda && !label) continue;
    std::string requirement =
        fmt::format("{}=={}{}", row.pip_name, public_version, label ? "+" + *label : "");
    add(findings,
        {Severity::error,
         "flashinfer-packages-mismatch",
         fmt::format("{} {} does not match flashinfer-python {}: `import flashinfer` raises "
                     "\"{} version ({}) does not match flashinfer version ({})\"",
                     row.pip_name, *companion, *flashinfer, row.pip_name, *companion, *flashinfer),
         fmt::format("{} must carry flashinfer-python's version{} (flashinfer/jit/env.py)",
                     row.pip_name,
                     row.match == VersionMatch::prefix ? " before its CUDA label" : ""),
         {{"flashinfer-python", *flashinfer},
          {std::string(row.pip_name), *companion},
          {"venv", python.prefix}},
         fmt::format("{}/bin/python -m pip install --upgrade --no-deps --index-url {}{} \"{}\"",
                     python.prefix, kFlashInferWheelIndex, label ? "/" + *label : "",
                     requirement)});
  }
}

// The flags gpulaunch adds against the installed release (catalog/engines' FlagVersions): one it
// lacks, with no older spelling, would make the engine exit "unrecognized arguments" at every
// start; an unknown release gets the conservative spellings, said as info.
void check_flag_versions(const Context& context, const LaunchPlan& plan,
                         std::vector<Finding>& findings) {
  const Profile& profile = context.profile;
  const EngineRow& engine = engine_row(profile.engine.kind);
  const auto version = installed_engine_version(context.facts, profile.engine.kind);
  LaunchOptions options;
  options.node_rank = plan.node_rank;
  options.engine_version = version;
  std::vector<std::string> conservative;
  std::vector<std::string> missing;
  std::string needs;
  for (const auto& fit : fitted_flags(profile, options)) {
    if (fit.version_unknown) {
      if (fit.spelling != fit.flag)
        conservative.push_back(fmt::format("{} instead of {}", fit.spelling, fit.flag));
      else
        conservative.push_back(fmt::format("{} (since {})", fit.flag, fit.needs));
    } else if (fit.spelling.empty()) {
      missing.push_back(fit.flag);
      // The newest first release among them is the one that has them all.
      auto have = parse_version(needs), want = parse_version(fit.needs);
      if (!have || (want && *have < *want)) needs = fit.needs;
    }
  }
  if (!missing.empty()) {
    const std::string flags = fmt::format("{}", fmt::join(missing, ", "));
    add(findings, {Severity::error,
                   "engine-flag-too-new",
                   fmt::format("{} {} has no {}, which this profile needs (from {} on)",
                               engine.display, *version, flags, needs),
                   "the engine exits \"unrecognized arguments\" on a flag its release does not "
                   "know, at every start",
                   {{"installed", *version}, {"flags", flags}, {"since", needs}},
                   fmt::format("upgrade {} in engine.venv to {} or later, or change the profile "
                               "so that it needs none of them",
                               engine.pip_dist, needs)});
  }
  if (!conservative.empty())
    add(findings, {Severity::info,
                   "engine-version-unknown",
                   fmt::format("the installed {} release is unknown: the command line uses {}",
                               engine.display, fmt::join(conservative, ", ")),
                   "gpulaunch spells the flags it adds as the installed release takes them",
                   {{"venv", profile.engine.venv.value_or("")}},
                   "install the engine with pip into engine.venv, so its dist-info names the "
                   "release"});
}

void check_engine(const Context& context, const LaunchPlan& plan, std::vector<Finding>& findings) {
  const auto& facts = context.facts;
  const auto& profile = context.profile;
  if (!plan.argv.empty() && plan.argv.front().starts_with('/')) {
    const PathFact* launcher = facts.path(plan.argv.front());
    if (launcher && !launcher->executable)
      add(findings, {Severity::error,
                     "engine-executable-missing",
                     fmt::format("the engine's program '{}' {}", plan.argv.front(),
                                 launcher->exists ? "is not executable" : "does not exist"),
                     "the unit's ExecStart runs it",
                     {{"program", plan.argv.front()}},
                     "create the venv (engine.venv) or fix engine.python/engine.executable"});
  }
  const EngineRow& engine = engine_row(profile.engine.kind);
  const std::string_view module = engine.import_module;
  if (!module.empty() && facts.python) {
    auto found = facts.python->modules.find(std::string(module));
    if (found == facts.python->modules.end() || !found->second)
      add(findings, {Severity::error,
                     "engine-module-missing",
                     fmt::format("Python package '{}' is not installed in '{}'", module,
                                 facts.python->prefix),
                     fmt::format("engine.kind = \"{}\" runs the '{}' package", engine.name, module),
                     {{"venv", facts.python->prefix}, {"module", std::string(module)}},
                     fmt::format("install it into the venv: {}/bin/pip install {}",
                                 facts.python->prefix, engine.pip_dist)});
  }
  if (profile.model.is_local()) {
    const PathFact* model = facts.path(profile.model.path);
    if (model && !model->exists)
      add(findings, {Severity::error,
                     "model-path-missing",
                     fmt::format("model.path '{}' does not exist", profile.model.path),
                     "a local model path must exist before the start",
                     {{"model.path", profile.model.path}},
                     "download the model there or fix model.path"});
  }
  check_flag_versions(context, plan, findings);
  for (const auto& port : facts.ports)
    if (port.taken && port.port == profile.server.port)
      add(findings, {Severity::error,
                     std::string(kPortTakenCode),
                     fmt::format("port {} on {} is already in use", port.port, port.host),
                     "the engine must be able to bind server.host:server.port",
                     {{"server.port", std::to_string(port.port)}, {"server.host", port.host}},
                     "stop whatever holds it (`ss -ltnp`) or choose another server.port"});
}

// FlashInfer's downloaded cubins (flashinfer v0.6.18 jit/env.py, jit/cubin_loader.py): where the
// unit makes it read them, and whether it may fetch the ones missing there.
void check_cubins(const Context& context, const LaunchPlan& plan, std::vector<Finding>& findings) {
  const auto& python = context.facts.python;
  auto installed = [&](const std::string& module) {
    auto found = python->modules.find(module);
    return found != python->modules.end() && found->second;
  };
  if (!python || !installed("flashinfer")) return;
  const auto cubins = flashinfer_cubin_directory(plan);
  if (!cubins) return;
  const bool package = installed("flashinfer_cubin");
  std::vector<std::string> package_dirs;
  for (const auto& site : python->site_packages)
    package_dirs.push_back(site + "/flashinfer_cubin/cubins");
  // FLASHINFER_CUBIN_DIR wins over the flashinfer-cubin package: its cubins go unread unless
  // [env] names the package's own directory.
  if (package && cubins->explicit_choice && !package_dirs.empty() &&
      std::find(package_dirs.begin(), package_dirs.end(), cubins->path) == package_dirs.end())
    add(findings,
        {Severity::warning,
         "flashinfer-cubin-package-unused",
         fmt::format("flashinfer-cubin is installed in '{}', but [env] sets "
                     "FLASHINFER_CUBIN_DIR='{}', so FlashInfer never reads the package's cubins",
                     python->prefix, cubins->path),
         "FlashInfer reads cubins from FLASHINFER_CUBIN_DIR when it is set, from the "
         "flashinfer-cubin package only when it is not (flashinfer/jit/env.py)",
         {{std::string(kFlashinferCubinDirVariable), cubins->path},
          {"flashinfer-cubin", package_dirs.front()}},
         fmt::format("remove FLASHINFER_CUBIN_DIR from [env], or point it at the package: "
                     "[env] FLASHINFER_CUBIN_DIR = \"{}\"",
                     package_dirs.front())});
  // Offline, the package's cubins are all there; otherwise the directory must already hold them.
  const auto no_download = lookup(plan.environment, kFlashinferNoDownload);
  if (!no_download || (package && !cubins->explicit_choice)) return;
  const PathFact* directory = context.facts.path(cubins->path);
  if (directory && !directory->has_entries)
    add(findings,
        {Severity::warning,
         "flashinfer-cubins-missing-offline",
         fmt::format("FlashInfer may not download cubins ({} is set) and '{}' holds none",
                     kFlashinferNoDownload, cubins->path),
         "with downloads off, a FlashInfer kernel that ships as a cubin (TensorRT-LLM attention "
         "and MoE, DeepGEMM) fails at its first use with \"Artifact not found locally\"",
         {{std::string(kFlashinferCubinDirVariable), cubins->path},
          {std::string(kFlashinferNoDownload), *no_download}},
         fmt::format("install flashinfer-cubin of the same version as flashinfer into '{}' "
                     "(its cubins need no download), or fill '{}' where the network is "
                     "reachable (FLASHINFER_CUBIN_DIR={} {}/bin/python -m flashinfer "
                     "download-cubin) and copy it here",
                     python->prefix, cubins->path, cubins->path, python->prefix)});
}

// The unit runs the engine and gpulaunch's own helpers; who could take them over.
void check_trust(const Context& context, std::vector<Finding>& findings) {
  // Unset, the engine runs as the profile's own user (profile/service_user); root only by name.
  const auto& user = context.profile.service.user;
  if (user && *user == "root")
    add(findings,
        {Severity::warning,
         "engine-runs-as-root",
         "the engine would run as root: service.user is root",
         "the engine runs third-party wheels and model code (--trust-remote-code); as root, any "
         "of it owns the node",
         {{"service.user", *user}},
         fmt::format("remove service.user: the engine then runs as its own system user {}, "
                     "which `up` creates",
                     default_service_user(context.profile.name))});
  if (const auto& binary = context.facts.gpulaunch; binary && binary->user_writable)
    add(findings, {Severity::warning,
                   "gpulaunch-binary-user-writable",
                   fmt::format("the unit would run '{}' as root (ExecStopPost=), and a non-root "
                               "user can replace it",
                               binary->path),
                   "every program a root unit runs must be writable by root only (sudo's and "
                   "ssh's StrictModes rule)",
                   {{"gpulaunch", binary->path}, {"writable", *binary->user_writable}},
                   "install gpulaunch (the Debian package, or `cmake --install` to /usr/local) "
                   "and run `up` from there, not from a build tree"});
}

}  // namespace

FactsRequest facts_request(const Profile& profile, const LaunchPlan& plan,
                           const ShellEnvironment& shell) {
  FactsRequest request;
  request.environments.push_back({"unit", plan.environment});
  request.environments.push_back({"shell", shell.variables});
  request.cuda_home = profile.toolkit.cuda_home;
  request.service_user = profile.service.user;
  request.probe_gpulaunch_binary = true;
  if (profile.engine.venv) {
    request.python_prefix = *profile.engine.venv;
    request.python_interpreter = *profile.engine.venv + "/bin/python";
  } else if (profile.engine.python) {
    request.python_prefix = parent_path(parent_path(*profile.engine.python));
    request.python_interpreter = *profile.engine.python;
  }
  if (!plan.argv.empty() && plan.argv.front().starts_with('/'))
    request.paths.push_back(plan.argv.front());
  if (profile.model.is_local()) request.paths.push_back(profile.model.path);
  // Where the unit's shell would find the programs FlashInfer's JIT runs.
  for (std::string_view variable : {"FLASHINFER_NVCC", "FLASHINFER_NVCC_LAUNCHER"})
    if (auto value = lookup(plan.environment, variable))
      for (const auto& candidate : program_candidates(plan.environment, first_word(*value)))
        if (candidate.starts_with('/')) request.paths.push_back(normal_path(candidate));
  // Offline, the cubins FlashInfer needs must already be there (check_cubins).
  if (lookup(plan.environment, kFlashinferNoDownload))
    if (auto cubins = flashinfer_cubin_directory(plan)) request.paths.push_back(cubins->path);
  if (profile.server.port > 0) request.ports.emplace_back(profile.server.host, profile.server.port);
  // Node preflight, OS side (rules/node_checks): the model's size, the other installed profiles.
  if (profile.model.is_local()) request.model_directory = profile.model.path;
  if (profile.parallelism.nodes > 1 && profile.parallelism.dist_init_addr)
    request.rendezvous_host = split_host_port(*profile.parallelism.dist_init_addr).first;
  request.installed_profiles = probe_installed_profiles;
  return request;
}

// server.liveness on a keyed engine: a probe or metrics read without the key the engine wants
// would answer 401 every time, so the plan sends none; say which signal remains.
void check_liveness_key(const Profile& profile, const LaunchPlan& plan,
                        std::vector<Finding>& findings) {
  const EngineRow& row = engine_row(profile.engine.kind);
  const LivenessPlan& liveness = plan.liveness;
  if (!liveness.can_stall()) return;
  const ApiKeyUse key = find_api_key(row.liveness.api_key, plan.argv, profile);
  if (key.usable()) return;
  const bool probe_dropped =
      liveness.mode == LivenessMode::generate && !row.liveness.probe.path.empty();
  const bool metrics_dropped =
      row.liveness.api_key.guards_metrics && !row.liveness.metrics.path.empty();
  if (!probe_dropped && !metrics_dropped) return;
  const std::string remains =
      !liveness.metrics_path.empty()
          ? fmt::format("metrics: {}{} from {}", liveness.in_flight_metric,
                        liveness.in_flight_metric.empty() ? liveness.tokens_metric
                                                          : " and " + liveness.tokens_metric,
                        liveness.metrics_path)
          : "none: health answers alone feed the watchdog, a wedged engine that answers health "
            "is never stopped";
  findings.push_back(
      {liveness.metrics_path.empty() ? Severity::warning : Severity::info,
       "liveness-key-unusable",
       fmt::format("liveness sends no {} to {}: it needs the API key ({})",
                   probe_dropped && metrics_dropped ? "probe and no metrics read"
                   : probe_dropped                  ? "probe"
                                                    : "metrics read",
                   row.display, key.where),
       "gpulaunch sends an engine's API key only from [secrets], read by `run` from the unit's "
       "credentials; a request without it answers 401 every time",
       {{"signal left", remains}},
       row.liveness.api_key.variables.empty()
           ? std::string()
           : fmt::format("put the key in [secrets] as {} and drop the other ways it is given",
                         row.liveness.api_key.variables.front())});
}

// An options-file metrics switch (trtllm-serve's iteration statistics) where engine.args name
// their own file: gpulaunch passes no second one, so the switch must be in theirs.
void check_liveness_options_file(const Profile& profile, const LaunchPlan& plan,
                                 std::vector<Finding>& findings) {
  const LivenessPlan& liveness = plan.liveness;
  if (!liveness.can_stall() || liveness.user_options_file.empty()) return;
  const MetricsInterface& metrics = engine_row(profile.engine.kind).liveness.metrics;
  std::string text(metrics.options_file_text);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  findings.push_back(
      {Severity::info,
       "liveness-options-file",
       fmt::format("{} reads its options from '{}': liveness counts its iterations only where "
                   "that file holds '{}'",
                   engine_row(profile.engine.kind).display, liveness.user_options_file, text),
       fmt::format("without it {} answers '[]' and only the probe, which waits behind the "
                   "queue, watches the engine: a queue busy for longer than {}s is taken for a "
                   "stall",
                   metrics.path, liveness.timeout.count()),
       {{"file", liveness.user_options_file}},
       fmt::format("add the line '{}' to '{}', or drop {} from engine.args and gpulaunch passes "
                   "a file of its own",
                   text, liveness.user_options_file, metrics.options_file_flags.front())});
}

std::vector<Finding> evaluate(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                              const ShellEnvironment& shell) {
  auto context = make_context(profile, facts, plan);
  std::vector<Finding> findings;
  check_gpus(context, findings);
  check_toolkit(context, plan, shell, findings);
  check_engine(context, plan, findings);
  check_flashinfer_packages(context, plan, findings);
  check_cubins(context, plan, findings);
  check_trust(context, findings);
  check_node_os(profile, plan, facts, findings);
  check_node_health(plan, facts, findings);
  check_liveness_key(profile, plan, findings);
  check_liveness_options_file(profile, plan, findings);
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
  return findings;
}

}  // namespace gl
