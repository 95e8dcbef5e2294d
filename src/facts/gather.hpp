// SPDX-License-Identifier: Apache-2.0
#pragma once
// Gathers the node's Facts. What to look at beyond the node itself (the environments a JIT
// library will run in, the engine's venv, the model path, the port) comes from the caller.

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "facts/environment.hpp"
#include "facts/facts.hpp"
#include "facts/image_tool.hpp"
#include "facts/node_fs.hpp"
#include "facts/node_health.hpp"
#include "util/state_paths.hpp"

namespace gl {

struct LabelledEnvironment {
  std::string label;  // "unit", "shell"
  EnvironmentVariables variables;
};

struct FactsRequest {
  std::vector<LabelledEnvironment> environments;  // every toolkit these could find is probed
  std::optional<std::string> cuda_home;           // the profile's toolkit
  std::optional<std::string> python_prefix;       // venv, or the interpreter's prefix
  std::optional<std::string> python_interpreter;
  // engine.image: read through `image_tool` (its Python becomes Facts::python), with the CDI
  // specs its GPUs need; the tool is nullptr where nothing may run (--root, a facts file).
  std::optional<std::string> image;
  ImageTool* image_tool = nullptr;
  // The host's CDI specs without an image (`check --node`: whether they are the driver's).
  bool probe_cdi = false;
  // Ask nvidia-modprobe --help where a node needs IMEX channel 0 (a multi-node profile's rule).
  bool probe_modprobe_options = true;
  // What that image's container would bind-mount from the host: whether a non-root user could
  // replace one (util/safe_file's replaceable_reason).
  std::vector<std::string> mount_sources;
  std::vector<std::string>
      paths;  // existence checks (model, launcher, a cache that must be filled)
  std::vector<std::pair<std::string, long long>> ports;  // host, port
  bool probe_ports = true;  // false under --root: the ports of an image are not this host's
  // Whom a program someone else could have written (an nvcc without version files, nvidia-smi
  // found on a PATH) runs as when gpulaunch is root: service.user, else nobody.
  std::optional<std::string> service_user;
  // Where such a program's answers are remembered (root-owned); nullopt: this run only.
  std::optional<std::filesystem::path> probe_cache = state_paths::probe_cache_file();
  // Record the running gpulaunch binary and who could replace it (check warns on a build tree).
  bool probe_gpulaunch_binary = false;
  // Node preflight, OS side (issue 16). A local model.path: its weights and config.json
  // (facts/model_probe).
  std::optional<std::string> model_directory;
  // A multi-node profile's rendezvous host (dist_init_addr's): which interface routes to it.
  std::optional<std::string> rendezvous_host;
  // Every profile installed on the node and its GPUs: rules/installed_profiles reads them (it
  // needs the plan's GPU assignment, which facts/ sits below); nullptr: not gathered.
  std::vector<InstalledProfileFact> (*installed_profiles)(const NodeFs& node) = nullptr;
  // This host's kernel journal and service manager, for Xid lines and the Fabric Manager's state
  // (facts/node_health); unset under --root, whose image is not this host.
  std::optional<HostSources> host;
};

Facts gather_facts(const NodeFs& node, const FactsRequest& request);

}  // namespace gl
