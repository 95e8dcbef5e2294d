// SPDX-License-Identifier: Apache-2.0
#include "facts/gather.hpp"

#include <algorithm>
#include <filesystem>

#include "catalog/nvidia_devices.hpp"
#include "facts/gpu_probe.hpp"
#include "facts/image_facts.hpp"
#include "facts/model_probe.hpp"
#include "facts/node_os.hpp"
#include "facts/python_env.hpp"
#include "facts/routes.hpp"
#include "facts/sandbox_probe.hpp"
#include "facts/toolkit_probe.hpp"
#include "util/own_programs.hpp"
#include "util/port_probe.hpp"
#include "util/process.hpp"
#include "util/safe_file.hpp"

namespace gl {
namespace {

class ToolkitCollector {
 public:
  explicit ToolkitCollector(const NodeFs& node) : node_(node) {}

  void add(const std::string& root, const std::string& nvcc, const std::string& via) {
    std::string normal_root = normal_path(root);
    std::string normal_nvcc = normal_path(nvcc);
    for (auto& toolkit : toolkits_)
      if (toolkit.root == normal_root && toolkit.nvcc == normal_nvcc) {
        if (std::find(toolkit.found_via.begin(), toolkit.found_via.end(), via) ==
            toolkit.found_via.end())
          toolkit.found_via.push_back(via);
        return;
      }
    ToolkitFact toolkit;
    toolkit.root = normal_root;
    toolkit.nvcc = normal_nvcc;
    toolkit.found_via.push_back(via);
    toolkits_.push_back(std::move(toolkit));
  }

  void add_root(const std::string& root, const std::string& via) {
    add(root, normal_path(root) + "/bin/nvcc", via);
  }

  // Every PATH entry holding an nvcc: `which nvcc` would stop at the first.
  void add_path_entries(const EnvironmentVariables& variables, const std::string& via) {
    for (const auto& directory : path_directories(variables)) {
      std::string nvcc = normal_path(directory) + "/nvcc";
      if (node_.is_executable_file(nvcc)) add(parent_path(directory), nvcc, via);
    }
  }

  // An nvcc without version files runs once per distinct file: /usr/local/cuda and
  // /usr/local/cuda-13.0 are one, and the cache remembers it across runs.
  std::vector<ToolkitFact> probe(NvccRunner& runner) {
    for (auto& toolkit : toolkits_) probe_toolkit(node_, toolkit, &runner);
    return std::move(toolkits_);
  }

 private:
  const NodeFs& node_;
  std::vector<ToolkitFact> toolkits_;
};

std::optional<std::string> find_program(const NodeFs& node, const FactsRequest& request,
                                        const std::string& name) {
  for (const auto& environment : request.environments)
    for (const auto& directory : path_directories(environment.variables))
      if (node.is_executable_file(normal_path(directory) + "/" + name))
        return normal_path(directory) + "/" + name;
  for (std::string directory : {"/usr/bin", "/bin", "/usr/local/bin"})
    if (node.is_executable_file(directory + "/" + name)) return directory + "/" + name;
  return std::nullopt;
}

// What `up` renders into the unit's ExecStart= (cli/lifecycle: the running binary).
std::optional<std::string> running_binary() {
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return std::nullopt;
  return self.string();
}

}  // namespace

Facts gather_facts(const NodeFs& given, const FactsRequest& request) {
  // One gather sees the node at one moment: each path is asked of the kernel once, however many
  // probes look at it (toolkit roots reached by several routes, PATH entries, the venv's tree).
  const NodeFs node = given.remembering();
  Facts facts;
  facts.root = node.root().string();

  auto gpus = probe_gpus(
      node, [&] { return find_program(node, request, "nvidia-smi"); }, request.service_user);
  facts.driver = std::move(gpus.driver);
  facts.gpus = std::move(gpus.gpus);
  if (request.host) facts.node_health = probe_node_health(node, *request.host, facts.gpus);

  if (request.image) {
    // podman found as nvidia-smi is: on the environments' PATH, then /usr/bin (the node's).
    std::unique_ptr<ImageTool> podman;
    ImageTool* tool = request.image_tool;
    if (!tool)
      if (auto program = find_program(node, request, "podman");
          program && node.host_path(*program)) {
        podman = podman_image_tool(node.host_path(*program)->string());
        tool = podman.get();
      }
    if (tool) {
      auto probe = probe_image(*tool, *request.image);
      facts.image = std::move(probe.image);
      facts.python = std::move(probe.python);
    } else {
      facts.image = ImageFact{};
      facts.image->reference = *request.image;
      facts.image->problems.push_back("not inspected: podman not found on PATH");
    }
    facts.cdi = probe_cdi(node);
    if (tool)
      if (auto version = tool->version()) facts.cdi->podman_version = *version;
  }
  if (request.probe_cdi && !request.image) facts.cdi = probe_cdi(node);
  if (request.python_prefix && !request.image)
    facts.python = probe_python_env(
        node, *request.python_prefix,
        request.python_interpreter.value_or(*request.python_prefix + "/bin/python"));

  ToolkitCollector toolkits(node);
  if (request.cuda_home) toolkits.add_root(*request.cuda_home, "toolkit.cuda_home");
  for (const auto& environment : request.environments) {
    if (auto home = lookup(environment.variables, "CUDA_HOME"))
      toolkits.add_root(*home, "CUDA_HOME (" + environment.label + ")");
    if (auto path = lookup(environment.variables, "CUDA_PATH"))
      toolkits.add_root(*path, "CUDA_PATH (" + environment.label + ")");
    toolkits.add_path_entries(environment.variables, "PATH (" + environment.label + ")");
    // FlashInfer compiles with this program instead (flashinfer/jit/cpp_ext.py).
    if (auto nvcc = lookup(environment.variables, "FLASHINFER_NVCC"))
      for (const auto& candidate : program_candidates(environment.variables, first_word(*nvcc)))
        if (candidate.starts_with('/') && node.is_executable_file(candidate)) {
          toolkits.add(parent_path(parent_path(candidate)), candidate,
                       "FLASHINFER_NVCC (" + environment.label + ")");
          break;
        }
  }
  if (node.exists("/usr/local/cuda")) toolkits.add_root("/usr/local/cuda", "/usr/local/cuda");
  for (const auto& name : node.list("/usr/local"))
    if (name.rfind("cuda-", 0) == 0 && node.is_directory("/usr/local/" + name))
      toolkits.add_root("/usr/local/" + name, "/usr/local/cuda-*");
  if (node.is_executable_file("/usr/bin/nvcc"))
    toolkits.add("/usr", "/usr/bin/nvcc", "/usr/bin/nvcc");
  if (facts.python)
    for (const auto& site : facts.python->site_packages)
      if (node.is_executable_file(site + "/nvidia/cu13/bin/nvcc"))
        toolkits.add_root(site + "/nvidia/cu13", "venv nvidia-cuda-nvcc wheel");
  ProbeCache cache(request.probe_cache);
  NvccRunner runner{cache, request.service_user};
  facts.toolkits = toolkits.probe(runner);
  cache.save();

  for (const auto& path : request.paths) {
    PathFact fact;
    fact.path = path;
    fact.exists = node.exists(path);
    fact.directory = node.is_directory(path);
    fact.executable = node.is_executable_file(path);
    fact.has_entries = fact.directory && !node.list(path).empty();
    facts.paths.push_back(std::move(fact));
  }

  // The binary is this host's, so an image probed under --root has none.
  if (request.probe_gpulaunch_binary && node.root() == "/")
    if (auto binary = running_binary())
      for (const std::string& program : {*binary, record_start_program(*binary)})
        facts.root_programs.push_back(
            ProgramFact{program, user_writable_reason(program), node.is_executable_file(program)});

  // Root's podman resolves each mount's source by name at every start: who could replace one.
  for (const auto& source : request.mount_sources)
    facts.container_mounts.push_back(
        MountSourceFact{source, replaceable_reason(source, node.root())});

  // Node preflight, OS side: files and statvfs only.
  facts.infiniband = probe_infiniband(node);
  facts.shm = probe_shm(node);
  facts.sandbox = probe_sandbox(node);
  // NVML answering is the driver loaded: its GPUs are what the PCI bus would be scanned for.
  facts.nvidia_nodes = probe_nvidia_nodes(
      node, facts.driver.source == "nvml" ? std::optional(facts.gpus.size()) : std::nullopt);
  // Asked only where a node needs IMEX channel 0: whether this nvidia-modprobe can make it.
  if (request.probe_modprobe_options && needs_modprobe_help(*facts.nvidia_nodes))
    if (auto modprobe = node.host_path(std::string(kNvidiaModprobe)))
      if (auto help = run_unprivileged(modprobe->string(), {std::string(kModprobeHelp)},
                                       request.service_user);
          help && help->exit_code == 0)
        read_modprobe_help(*facts.nvidia_nodes, help->out);
  if (request.rendezvous_host) {
    auto interface = probe_route_interface(node, *request.rendezvous_host);
    facts.rendezvous_route = RouteFact{*request.rendezvous_host, interface.value_or(""),
                                       interface ? std::string() : interface.error().message};
  }
  if (request.model_directory) facts.model = probe_model(node, *request.model_directory);
  if (request.installed_profiles) facts.installed_profiles = request.installed_profiles(node);

  if (request.probe_ports)
    for (const auto& [host, port] : request.ports) {
      PortFact fact;
      fact.host = host;
      fact.port = port;
      if (auto state = probe_port(host, port))
        fact.taken = *state == PortState::taken;
      else
        fact.problem = state.error().message;
      facts.ports.push_back(std::move(fact));
    }
  return facts;
}

}  // namespace gl
