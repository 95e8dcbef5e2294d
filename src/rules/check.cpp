// SPDX-License-Identifier: Apache-2.0
#include "rules/check.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "catalog/cuda_arch.hpp"
#include "facts/node_fs.hpp"
#include "plan/gpu_assignment.hpp"
#include "plan/launch_plan.hpp"
#include "rules/jit_toolkit.hpp"
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

// What the rules need besides the raw facts, computed once.
struct Context {
  const Profile& profile;
  const Facts& facts;
  std::vector<const GpuFact*> gpus;             // the ones the engine gets
  std::vector<ComputeCapability> capabilities;  // distinct, ascending
  bool explicit_arch_suffix = false;            // "12.0f": FlashInfer skips its version gate
};

Context make_context(const Profile& profile, const Facts& facts, const LaunchPlan& plan) {
  Context context{profile, facts, assigned_gpu_facts(plan.gpus, facts), {}, false};
  std::set<ComputeCapability> distinct;
  for (const auto* gpu : context.gpus) distinct.insert({gpu->cc_major, gpu->cc_minor});
  context.capabilities.assign(distinct.begin(), distinct.end());
  auto arch_list = lookup(plan.environment, "FLASHINFER_CUDA_ARCH_LIST");
  if (arch_list && !arch_list->empty()) {
    bool all_suffixed = true;
    size_t begin = 0;
    while (begin < arch_list->size()) {
      auto end = arch_list->find_first_of(" ,;", begin);
      if (end == std::string::npos) end = arch_list->size();
      auto entry = arch_list->substr(begin, end - begin);
      if (!entry.empty() && entry.back() != 'a' && entry.back() != 'f') all_suffixed = false;
      begin = end + 1;
    }
    context.explicit_arch_suffix = all_suffixed;
  }
  return context;
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

// The toolkit rules for one candidate: used on the toolkit the unit's JIT picks, and to find a
// toolkit on the node that satisfies all of them for the fix.
std::vector<Finding> toolkit_findings(const Context& context, const ToolkitFact& toolkit,
                                      const std::string& how) {
  std::vector<Finding> findings;
  auto version = parse_version(toolkit.version().value_or(""));
  if (!version) return findings;
  const std::string where = toolkit_label(toolkit) + " (" + how + ")";
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
  if (context.facts.python && !context.explicit_arch_suffix)
    for (const auto& gate : jit_gates()) {
      auto installed = context.facts.python->packages.find(std::string(gate.package));
      if (installed == context.facts.python->packages.end()) continue;
      auto library = parse_version(installed->second);
      if (!library || *library < gate.since || !(*version < gate.min_nvcc)) continue;
      for (auto capability : context.capabilities) {
        if (capability.major != gate.arch_major) continue;
        findings.push_back(
            {Severity::error,
             "flashinfer-nvcc-too-old",
             fmt::format(
                 "FlashInfer {} refuses compute capability {}.{} with nvcc {} at {}: its JIT "
                 "ends up with no target architecture and the server dies with "
                 "\"FlashInfer requires GPUs with sm75 or higher\"",
                 installed->second, capability.major, capability.minor, version->major_minor(),
                 toolkit.nvcc),
             fmt::format("FlashInfer >= {} with a {}.x GPU needs nvcc >= {} ({})",
                         gate.since.major_minor() + "." + std::to_string(gate.since.patch),
                         gate.arch_major, gate.min_nvcc.major_minor(), gate.reference),
             {{"gpus", gpus_text(context, capability)},
              {"toolkit", where},
              {"flashinfer", installed->second}},
             ""});
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

void check_gpus(const Context& context, std::vector<Finding>& findings) {
  const auto& facts = context.facts;
  const auto& profile = context.profile;
  if (!facts.driver.present) {
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
    if (std::none_of(facts.gpus.begin(), facts.gpus.end(),
                     [&](const GpuFact& gpu) { return names_gpu(device, gpu); }))
      add(findings, {Severity::error,
                     "gpu-device-missing",
                     fmt::format("GPU '{}' named in gpus.devices is not on this node", device),
                     "every entry of gpus.devices must be a GPU index or UUID of this node",
                     {{"gpus.devices", device}, {"gpus found", std::to_string(facts.gpus.size())}},
                     "fix gpus.devices (see `gpulaunch facts`)"});
  long long needed = profile.gpus_per_node();
  long long available = static_cast<long long>(context.gpus.size());
  if (available < needed)
    add(findings, {Severity::error,
                   "gpu-count-short",
                   fmt::format("the profile needs {} GPUs per node ({}), {} available", needed,
                               profile.world_text(), available),
                   "a node must have one GPU for each of its ranks",
                   {{"gpus needed", std::to_string(needed)},
                    {"gpus available", std::to_string(available)},
                    {"gpus on node", std::to_string(facts.gpus.size())}},
                   "lower parallelism.tp/pp/dp or run on a node with enough GPUs"});
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
  }

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
    for (auto& finding : toolkit_findings(context, *unit_pick.toolkit,
                                          "the unit's JIT finds it by " + unit_pick.how)) {
      finding.fix = fix;
      add(findings, std::move(finding));
    }
  }

  auto shell_pick = pick_jit_toolkit(shell.variables, facts);
  if (unit_pick.usable() && shell_pick.usable() &&
      shell_pick.toolkit->resolved_root != unit_pick.toolkit->resolved_root)
    add(findings, {Severity::warning,
                   "jit-toolkit-shell-mismatch",
                   fmt::format("a JIT run from this shell would use {} ({}), the unit uses {} ({})",
                               toolkit_label(*shell_pick.toolkit), shell_pick.how,
                               toolkit_label(*unit_pick.toolkit), unit_pick.how),
                   "reproducing a failure by hand needs the unit's toolkit",
                   {{"shell", shell_pick.root}, {"unit", unit_pick.root}},
                   "export CUDA_HOME=" + unit_pick.root + " before running the engine by hand"});

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
  const auto cubin_dir = lookup(plan.environment, "FLASHINFER_CUBIN_DIR");
  if (!cubin_dir) return;
  // FLASHINFER_CUBIN_DIR wins over the flashinfer-cubin package: its cubins go unread unless
  // the variable names the package's own directory.
  if (installed("flashinfer_cubin")) {
    std::vector<std::string> package_dirs;
    for (const auto& site : python->site_packages)
      package_dirs.push_back(site + "/flashinfer_cubin/cubins");
    if (std::find(package_dirs.begin(), package_dirs.end(), *cubin_dir) == package_dirs.end() &&
        !package_dirs.empty())
      add(findings,
          {Severity::warning,
           "flashinfer-cubin-package-unused",
           fmt::format("flashinfer-cubin is installed in '{}', but the unit sets "
                       "FLASHINFER_CUBIN_DIR='{}', so FlashInfer never reads the package's cubins",
                       python->prefix, *cubin_dir),
           "FlashInfer reads cubins from FLASHINFER_CUBIN_DIR when it is set, from the "
           "flashinfer-cubin package only when it is not (flashinfer/jit/env.py)",
           {{"FLASHINFER_CUBIN_DIR", *cubin_dir}, {"flashinfer-cubin", package_dirs.front()}},
           fmt::format("point it at the package: [env] FLASHINFER_CUBIN_DIR = \"{}\"",
                       package_dirs.front())});
  }
  const PathFact* directory = context.facts.path(*cubin_dir);
  if (lookup(plan.environment, kFlashinferNoDownload) && directory && !directory->has_entries)
    add(findings,
        {Severity::warning,
         "flashinfer-cubins-missing-offline",
         fmt::format("FlashInfer may not download cubins ({} is set) and '{}' holds none",
                     kFlashinferNoDownload, *cubin_dir),
         "with downloads off, a FlashInfer kernel that ships as a cubin (TensorRT-LLM attention "
         "and MoE, DeepGEMM) fails at its first use with \"Artifact not found locally\"",
         {{"FLASHINFER_CUBIN_DIR", *cubin_dir},
          {std::string(kFlashinferNoDownload), *lookup(plan.environment, kFlashinferNoDownload)}},
         fmt::format(
             "fill it where the network is reachable (FLASHINFER_CUBIN_DIR={} {}/bin/python "
             "-m flashinfer download-cubin) and copy it here, or install flashinfer-cubin "
             "of the same version as flashinfer and point [env] FLASHINFER_CUBIN_DIR at "
             "its cubins directory",
             *cubin_dir, python->prefix)});
}

// The unit runs the engine and gpulaunch's own helpers; who could take them over.
void check_trust(const Context& context, std::vector<Finding>& findings) {
  const auto& user = context.profile.service.user;
  if (!user || *user == "root")
    add(findings,
        {Severity::warning,
         "engine-runs-as-root",
         "the engine would run as root: " +
             std::string(user ? "service.user is root" : "service.user is not set"),
         "the engine runs third-party wheels and model code (--trust-remote-code); as root, any "
         "of it owns the node",
         {{"service.user", user.value_or("(unset)")}},
         "set service.user to an unprivileged account that can read the model and the venv "
         "(e.g. `useradd --system gpulaunch`, then service.user = \"gpulaunch\")"});
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
  // Offline, the cubins FlashInfer needs must already be there (check_cubins).
  if (lookup(plan.environment, kFlashinferNoDownload))
    if (auto cubins = lookup(plan.environment, "FLASHINFER_CUBIN_DIR"))
      request.paths.push_back(*cubins);
  if (profile.server.port > 0) request.ports.emplace_back(profile.server.host, profile.server.port);
  return request;
}

std::vector<Finding> evaluate(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                              const ShellEnvironment& shell) {
  auto context = make_context(profile, facts, plan);
  std::vector<Finding> findings;
  check_gpus(context, findings);
  check_toolkit(context, plan, shell, findings);
  check_engine(context, plan, findings);
  check_cubins(context, plan, findings);
  check_trust(context, findings);
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
  return findings;
}

}  // namespace gl
