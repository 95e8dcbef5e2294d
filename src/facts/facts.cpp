// SPDX-License-Identifier: Apache-2.0
#include "facts/facts.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "util/json_file.hpp"
#include "util/try.hpp"

// nlohmann 3.11 has no std::optional support; absent values are written as null.
namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& out, const std::optional<T>& value) {
    if (value)
      out = *value;
    else
      out = nullptr;
  }
  static void from_json(const json& in, std::optional<T>& value) {
    if (in.is_null())
      value.reset();
    else
      value = in.get<T>();
  }
};
}  // namespace nlohmann

namespace gl {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuHealthFact, persistence_mode,
                                                ecc_uncorrected_volatile, row_remap_pending,
                                                row_remap_failure, retired_pages_pending,
                                                fabric_state, fabric_error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuFact, index, name, uuid, cc_major, cc_minor,
                                                memory_total_mib, mig, pci_bus_id, health)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DriverFact, present, source, version, max_cuda,
                                                problems, nvml_error, lost_gpus)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(XidFact, xid, pci, gpu, realtime_usec, message)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NodeHealthFact, kernel_log_read, boot_usec, xids,
                                                fabric_manager_state, problems)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ToolkitFact, root, nvcc, found_via, resolved_root,
                                                root_exists, nvcc_exists, nvcc_version,
                                                nvcc_version_source, json_version, header_version,
                                                archs, archs_source, problems, cudart,
                                                runtime_header)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PythonEnvFact, prefix, interpreter,
                                                interpreter_exists, site_packages, torch_version,
                                                torch_cuda, packages, modules)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PathFact, path, exists, directory, executable,
                                                has_entries)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PortFact, host, port, taken, problem,
                                                held_by_service)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProgramFact, path, user_writable, exists)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RouteFact, host, interface, problem)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InfinibandFact, devices, peer_memory, modules_read)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SandboxFact, devices, mps_daemon, ptrace_scope)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NvidiaNodesFact, driver_loaded, uvm_registered,
                                                uvm_node, minors, missing, capabilities,
                                                imex_channels, imex_major, imex_channel0,
                                                modprobe_installed, modprobe_version,
                                                modprobe_imex_option, devices_unit_installed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ShmFact, path, exists, size_bytes, problem)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InstalledProfileFact, name, snapshot, engine, gpus,
                                                user, share_user, problem)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ModelFact, path, weights_bytes, weights_source,
                                                links_skipped, layers, kv_heads, head_dim,
                                                kv_lora_rank, rope_head_dim, context, problems)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ImageFact, reference, id, digest, env, labels,
                                                require_cuda, cuda_version, compat_libraries,
                                                compat_driver, problems)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MountSourceFact, path, replaceable)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CdiFact, specs, gpu_devices, driver_versions,
                                                spec_versions, podman_version)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Facts, root, driver, gpus, toolkits, python, paths,
                                                ports, root_programs, infiniband, rendezvous_route,
                                                shm, sandbox, nvidia_nodes, installed_profiles,
                                                model, image, cdi, container_mounts, node_health)

std::string ToolkitFact::not_toolkit_root_reason() const {
  if (root == "/usr") return "";
  std::string reason;
  if (cudart && cudart->empty()) reason = "no libcudart.so in lib64/ or lib/";
  if (runtime_header && !*runtime_header)
    reason += (reason.empty() ? "" : ", ") + std::string("no include/cuda_runtime.h");
  return reason;
}

std::optional<std::string> ToolkitFact::version() const {
  if (nvcc_version) return nvcc_version;
  if (json_version) return json_version;
  return header_version;
}

const ToolkitFact* Facts::toolkit_at(const std::string& wanted) const {
  for (const auto& toolkit : toolkits)
    if (toolkit.root == wanted) return &toolkit;
  return nullptr;
}

const ToolkitFact* Facts::toolkit_with_nvcc(const std::string& nvcc) const {
  for (const auto& toolkit : toolkits)
    if (toolkit.nvcc == nvcc) return &toolkit;
  return nullptr;
}

bool Facts::has_infiniband() const {
  return infiniband && !infiniband->devices.empty();
}

SandboxNode Facts::sandbox_node() const {
  if (!sandbox) return {};
  return SandboxNode{sandbox->devices, sandbox->mps_daemon};
}

std::optional<std::string> Facts::socket_interface() const {
  if (!rendezvous_route || rendezvous_route->interface.empty()) return std::nullopt;
  return rendezvous_route->interface;
}

const PathFact* Facts::path(const std::string& wanted) const {
  for (const auto& entry : paths)
    if (entry.path == wanted) return &entry;
  return nullptr;
}

nlohmann::json facts_to_json(const Facts& facts) {
  return facts;
}

Result<Facts> facts_from_json(const nlohmann::json& json) {
  try {
    return json.get<Facts>();
  } catch (const nlohmann::json::exception& error) {
    return failf("Failed to read facts: {}", error.what());
  }
}

namespace {

// What `gpulaunch facts --json` always writes at the top level; anything else is some other
// JSON file, named as such rather than read as a node without GPUs.
Result<void> check_facts_shape(const nlohmann::json& json, const std::string& origin) {
  auto not_facts = [&](std::string why) {
    return failf("'{}' is not a gpulaunch facts file: {}", origin, why);
  };
  if (!json.is_object())
    return not_facts(fmt::format("the top level is a JSON {}, not an object", json.type_name()));
  using Type = nlohmann::json::value_t;
  struct Key {
    const char* name;
    Type type;
    const char* expected;
  };
  for (const auto& [name, type, expected] :
       {Key{"root", Type::string, "a string"}, Key{"driver", Type::object, "an object"},
        Key{"gpus", Type::array, "an array"}, Key{"toolkits", Type::array, "an array"}}) {
    auto found = json.find(name);
    if (found == json.end()) return not_facts(fmt::format("no \"{}\" key", name));
    if (found->type() != type)
      return not_facts(
          fmt::format("\"{}\" is a JSON {}, not {}", name, found->type_name(), expected));
  }
  return {};
}

}  // namespace

Result<Facts> parse_facts(std::string_view text, const std::string& origin) {
  GL_TRY(auto json, parse_bounded_json<nlohmann::json>(text, fmt::format("facts '{}'", origin)));
  GL_TRY_VOID(check_facts_shape(json, origin));
  auto facts = facts_from_json(json);
  if (!facts) return failf("Failed to read facts '{}': {}", origin, facts.error().message);
  return facts;
}

std::string capability_text(const GpuFact& gpu) {
  return fmt::format("{}.{}", gpu.cc_major, gpu.cc_minor);
}

Result<Facts> load_facts_file(const std::string& path) {
  GL_TRY(auto text, read_json_text(path));
  return parse_facts(text, path);
}

}  // namespace gl
