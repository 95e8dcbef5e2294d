// SPDX-License-Identifier: Apache-2.0
#include "rules/node_checks.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/core.h>

#include "catalog/engines.hpp"
#include "catalog/node_requirements.hpp"
#include "facts/environment.hpp"
#include "plan/gpu_assignment.hpp"
#include "profile/service_user.hpp"
#include "rules/model_fit.hpp"
#include "rules/sandbox_checks.hpp"
#include "unit/render.hpp"
#include "util/text_join.hpp"

namespace gl {
namespace {

std::string gb(double bytes) {
  return fit_gb(bytes);
}

// What the unit `up` would install on this node lets the engine reach, read back from the
// rendered unit with service.extra applied, as systemd reads it: the last DevicePolicy= wins, an
// empty DeviceAllow= empties the list, PrivateDevices=yes hides every device that is not a
// pseudo-device.
struct UnitAccess {
  std::string device_policy = "auto";
  std::vector<std::string> device_allow;
  bool private_devices = false;
  std::optional<std::string> memlock;  // LimitMEMLOCK=; nullopt: systemd's default

  bool allows(std::string_view group) const {
    if (private_devices) return false;
    if (device_policy == "auto" && device_allow.empty()) return true;
    const std::string name(group);
    return std::ranges::any_of(device_allow, [&](const std::string& entry) {
      const std::string pattern = entry.substr(0, entry.find(' '));
      return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
    });
  }
};

UnitAccess unit_access(const Profile& profile, const LaunchPlan& plan) {
  const UnitFile unit = render_unit(profile, plan, RenderOptions{});
  UnitAccess access;
  for (const auto& section : unit.sections()) {
    if (section.name != "Service") continue;
    for (const auto& [key, value] : section.entries) {
      if (key == "DevicePolicy") access.device_policy = value;
      if (key == "DeviceAllow") {
        if (value.empty())
          access.device_allow.clear();
        else
          access.device_allow.push_back(value);
      }
      if (key == "PrivateDevices")
        access.private_devices = value == "yes" || value == "true" || value == "1";
      if (key == "LimitMEMLOCK") access.memlock = value;
    }
  }
  return access;
}

void check_infiniband(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                      std::vector<Finding>& findings) {
  if (!facts.has_infiniband()) return;
  const auto& ib = *facts.infiniband;
  const std::string devices = join(ib.devices, ", ");
  // Inside one node NCCL talks over NVLink, PCIe and shared memory; InfiniBand carries a group's
  // traffic between nodes.
  const bool multi_node = profile.parallelism.nodes > 1;
  const Severity between_nodes = multi_node ? Severity::error : Severity::warning;
  check_peermem(facts, findings);
  // The unit `up` renders on this node, whatever plan the caller built.
  LaunchPlan node_plan = plan;
  node_plan.infiniband = true;
  const UnitAccess access = unit_access(profile, node_plan);
  if (!access.allows(kInfinibandVerbsGroup))
    findings.push_back(
        {between_nodes,
         "infiniband-devices-hidden",
         fmt::format("the unit hides /dev/infiniband from the engine ({}): NCCL cannot open the "
                     "InfiniBand devices ({}) and falls back to TCP sockets",
                     access.private_devices ? "PrivateDevices=yes"
                                            : "DevicePolicy=" + access.device_policy + " without " +
                                                  std::string(kInfinibandVerbsGroup),
                     devices),
         "NCCL's InfiniBand transport opens /dev/infiniband/uverbs* (device group "
         "infiniband_verbs); the unit's device policy must allow them",
         {{"infiniband", devices},
          {"DevicePolicy", access.device_policy},
          {"DeviceAllow", access.device_allow.empty() ? "(none)" : join(access.device_allow, "; ")},
          {"PrivateDevices", access.private_devices ? "yes" : "no"}},
         fmt::format("remove the DevicePolicy=/DeviceAllow=/PrivateDevices= lines from "
                     "service.extra (the unit allows {} on a node with InfiniBand), or add "
                     "\"DeviceAllow={} rw\" to it",
                     join(std::vector<std::string>(infiniband_device_allow().begin(),
                                                   infiniband_device_allow().end()),
                          " and "),
                     kInfinibandVerbsGroup)});
  if (access.memlock != kRdmaMemlock)
    findings.push_back(
        {between_nodes,
         "unit-memlock-limited",
         fmt::format(
             "the unit's memlock limit is {} on a node with InfiniBand: RDMA memory "
             "registration (ibv_reg_mr) fails past it",
             access.memlock ? "LimitMEMLOCK=" + *access.memlock : std::string("systemd's default")),
         "RDMA pins every buffer it registers against RLIMIT_MEMLOCK; NCCL's documentation runs "
         "with an unlimited one (--ulimit memlock=-1)",
         {{"infiniband", devices}, {"LimitMEMLOCK", access.memlock.value_or("(default)")}},
         "remove LimitMEMLOCK= from service.extra: on a node with InfiniBand the unit sets "
         "LimitMEMLOCK=infinity"});
}

// A multi-node group meets at rank 0's rendezvous; a node with no route there never joins, and one
// whose profile pins NCCL or Gloo to another interface sends from an address rank 0 may not reach.
void check_rendezvous_route(const LaunchPlan& plan, const Facts& facts,
                            std::vector<Finding>& findings) {
  if (!facts.rendezvous_route) return;
  const auto& route = *facts.rendezvous_route;
  if (route.interface.empty()) {
    findings.push_back(
        {Severity::error,
         "rendezvous-unroutable",
         fmt::format("this node has no route to the group's rendezvous host {}: it cannot join "
                     "the group, and the other ranks wait until their collective times out",
                     route.host),
         "every rank connects to rank 0's dist_init_addr before the first collective",
         {{"dist_init_addr host", route.host}, {"routing table", route.problem}},
         fmt::format("add a route to {} on this node, or set [parallelism] dist_init_addr (or "
                     "[nodes] hosts) to an address of rank 0 this node reaches",
                     route.host)});
    return;
  }
  for (std::string_view variable : {kNcclSocketInterfaceVariable, kGlooSocketInterfaceVariable}) {
    auto value = lookup(plan.environment, variable);
    // Only a plain name is judged: NCCL also takes prefixes, "^" exclusions and "=" exact lists.
    if (!value || value->empty() || value->find_first_of("^=,") != std::string::npos) continue;
    if (route.interface.starts_with(*value)) continue;
    findings.push_back(
        {Severity::warning,
         "socket-interface-not-routed",
         fmt::format("{}={} (the profile's [env]) but this node reaches the rendezvous host {} "
                     "through {}: the rank binds an interface rank 0 may not reach",
                     variable, *value, route.host, route.interface),
         "NCCL and Gloo send from the interface these variables name",
         {{std::string(variable), *value},
          {"route to " + route.host, route.interface + " (/proc/net/route)"}},
         fmt::format("remove {} from [env] (gpulaunch then sets {}), or set it to {}", variable,
                     route.interface, route.interface)});
  }
}

// The GPU a device string names on this node, as "index"; the string itself when unknown.
std::string gpu_identity(const std::string& device, const Facts& facts) {
  for (const auto& gpu : facts.gpus)
    if (names_gpu(device, gpu)) return std::to_string(gpu.index);
  return device;
}

void check_other_profiles(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                          std::vector<Finding>& findings) {
  if (!facts.installed_profiles) return;
  std::set<std::string> mine;
  for (const auto& device : plan.gpus) mine.insert(gpu_identity(device, facts));
  for (const auto& other : *facts.installed_profiles) {
    if (other.name == profile.name || other.problem) continue;
    std::vector<std::string> shared;
    for (const auto& device : other.gpus)
      if (mine.contains(gpu_identity(device, facts))) shared.push_back(device);
    if (shared.empty()) continue;
    findings.push_back(
        {Severity::warning,
         "gpus-shared-with-profile",
         fmt::format("profile '{}' ({}) is installed on the same GPU(s) {}: two engines started "
                     "together each size their memory from what the other has not taken yet "
                     "and one fails (vLLM #55827)",
                     other.name, other.engine, join(shared, ",")),
         "each GPU serves one installed profile at a time",
         {{"this profile's GPUs", join(plan.gpus, ",")},
          {other.name + "'s GPUs", join(other.gpus, ",")},
          {"installed", other.snapshot}},
         fmt::format("give one of them other GPUs (gpus.devices), or stop and remove the other: "
                     "gpulaunch down {} (and rm {} once it is no longer wanted)",
                     other.name, other.snapshot)});
  }
}

// Two engines under one uid can read and write each other's memory (where Yama's ptrace_scope
// is 0), files and caches: only where both profiles say service.share_user = true.
void check_shared_user(const Profile& profile, const Facts& facts, std::vector<Finding>& findings) {
  if (!facts.installed_profiles) return;
  const std::string user = service_user(profile);
  for (const auto& other : *facts.installed_profiles) {
    if (other.name == profile.name || other.problem || other.user != user) continue;
    if (profile.service.share_user && other.share_user) continue;
    findings.push_back(
        {Severity::error,
         "service-user-shared",
         fmt::format("profile '{}' is installed and runs as the same user '{}', and not both "
                     "set service.share_user = true",
                     other.name, user),
         "each profile's engine runs as its own uid unless both profiles share it on purpose: "
         "under one uid each engine can read and write the other's memory, files and caches",
         {{"service.user", user}, {"installed", other.snapshot}},
         fmt::format("remove service.user from both (each then runs as its own gpulaunch-NAME "
                     "user), or set service.share_user = true in both if they must share '{}'",
                     user)});
  }
}

// The flag that sets the engine's context, if it has one.
std::string_view context_flag(const EngineRow& row) {
  return row.context.flag.empty() ? fit_context_flag(row.name) : row.context.flag;
}

// The context length the engine is started with: its flag in engine.args, else the model's.
std::optional<long long> context_length(const Profile& profile, const ModelFact& model) {
  const EngineRow& row = engine_row(profile.engine.kind);
  const auto& args = profile.engine.args;
  for (size_t i = 0; i < args.size(); ++i)
    for (std::string_view flag :
         {row.context.flag, row.context.short_flag, fit_context_flag(row.name)}) {
      if (flag.empty()) continue;
      std::string value;
      if (args[i] == flag && i + 1 < args.size())
        value = args[i + 1];
      else if (args[i].starts_with(std::string(flag) + "="))
        value = args[i].substr(flag.size() + 1);
      else
        continue;
      long long parsed = 0;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
      if (error == std::errc() && end == value.data() + value.size() && parsed > 0) return parsed;
    }
  return model.context;
}

void check_model_fit(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                     std::vector<Finding>& findings) {
  if (!profile.model.is_local()) {
    if (profile.model.path.empty()) return;
    findings.push_back(
        {Severity::info,
         "model-fit-not-judged",
         fmt::format("model.path '{}' is a hub id: whether it fits the GPUs is not judged before "
                     "it is downloaded",
                     profile.model.path),
         "the fit rule reads the weights' size and config.json from a local directory",
         {{"model.path", profile.model.path}},
         fmt::format("download it (hf download {} --local-dir DIR) and set model.path = DIR to "
                     "have it judged",
                     profile.model.path)});
    return;
  }
  if (!facts.model) return;
  const ModelFact& model = *facts.model;
  if (!model.weights_bytes) {
    if (model.links_skipped > 0)
      findings.push_back(
          {Severity::info,
           "model-fit-not-judged",
           fmt::format("the weight files in '{}' are links ({} of them), which check does not "
                       "follow: whether the model fits is not judged",
                       model.path, model.links_skipped),
           "the fit rule reads weights as untrusted files and never follows a link",
           {{"model.path", model.path}},
           "keep a real copy (hf download --local-dir writes files, not links into the cache)"});
    return;
  }
  const EngineRow& row = engine_row(profile.engine.kind);
  const auto& p = profile.parallelism;
  const auto context = context_length(profile, model);
  const auto fit = fit_arithmetic(
      {profile.engine.kind, p.tp, p.pp, p.dp, p.ep, profile.engine.knob("engine.mem_fraction"),
       assigned_gpu_facts(plan.gpus, facts), context},
      model);
  if (!fit) return;
  const GpuFact* smallest = fit->smallest;
  const double fraction = fit->fraction;
  const std::string& fraction_source = fit->fraction_source;
  const long long copy_gpus = fit->copy_gpus;
  const double usable = fit->usable;
  const double weights = fit->weights;
  const double per_token = fit->per_token;
  const double kv = fit->kv;
  const double need = fit->need;
  if (need <= usable) return;
  // Weights that fit with a KV cache that does not: SGLang serves shorter requests, vLLM refuses.
  if (weights < usable && row.kv_shortfall.caps_request_length && per_token > 0) {
    const auto tokens = static_cast<long long>((usable - weights) / per_token);
    findings.push_back(
        {Severity::warning,
         "model-context-capped",
         fmt::format("one request of {} tokens needs a KV cache of {}, but {} is left beside the "
                     "weights: {} serves requests of about {} tokens at most",
                     *context, gb(kv), gb(usable - weights), row.display, tokens),
         fmt::format("{} ({})", row.kv_shortfall.behaviour, row.kv_shortfall.source),
         {{"weights", fmt::format("{} ({})", gb(weights), model.weights_source)},
          {"kv cache", gb(kv)},
          {"memory share", fmt::format("{} ({})", fraction, fraction_source)},
          {"parallelism", profile.world_text()}},
         fmt::format("to serve the full context, spread the model over more GPUs or use a "
                     "lower-precision checkpoint; to accept the cap, set it ({} in engine.args)",
                     context_flag(row))});
    return;
  }
  const auto gpus_needed = fit->gpus_needed();
  std::string kv_text = per_token > 0 && context
                            ? fmt::format("{} for one request of {} tokens ({:.0f} KiB a token)",
                                          gb(kv), *context, per_token / 1024)
                            : std::string("not counted (config.json does not say)");
  findings.push_back(
      {Severity::error,
       "model-does-not-fit",
       fmt::format("the model needs {} ({} of weights, KV cache {}) but {} x {} MiB x {} gives "
                   "{}",
                   gb(need), gb(weights), kv_text, copy_gpus, smallest->memory_total_mib, fraction,
                   gb(usable)),
       "the weights and the KV cache of one full-length request must fit in the memory share "
       "the engine takes on the GPUs that hold one copy of the model (tp x pp)",
       {{"weights", fmt::format("{} ({})", gb(weights), model.weights_source)},
        {"kv cache", kv_text},
        {"gpus",
         fmt::format("{} x {} ({} MiB)", copy_gpus, smallest->name, smallest->memory_total_mib)},
        {"memory share", fmt::format("{} ({})", fraction, fraction_source)},
        {"parallelism", profile.world_text()}},
       fmt::format("spread it over at least {} GPUs (a larger parallelism.tp or pp, on more "
                   "gpus.devices), use a lower-precision checkpoint (FP8, INT4), or shorten the "
                   "context{}",
                   gpus_needed,
                   context_flag(row).empty()
                       ? std::string()
                       : fmt::format(" ({} in engine.args)", context_flag(row)))});
}

}  // namespace

void check_peermem(const Facts& facts, std::vector<Finding>& findings) {
  if (!facts.has_infiniband()) return;
  const auto& ib = *facts.infiniband;
  const std::string devices = join(ib.devices, ", ");
  if (ib.modules_read && ib.peer_memory.empty()) {
    std::vector<std::string> modules;
    for (const auto& module : peer_memory_modules()) modules.emplace_back(module.module);
    findings.push_back(
        {Severity::warning,
         "infiniband-peermem-missing",
         fmt::format("InfiniBand devices ({}) but no peer-memory module is loaded: GPUDirect "
                     "RDMA is off, and NCCL copies every transfer between nodes through host "
                     "memory ({}: all-reduce from about 180 to 10 GB/s)",
                     devices, kPeerMemoryIssue),
         fmt::format("NCCL uses GPUDirect RDMA over InfiniBand only when a peer-memory client is "
                     "loaded ({} or one of {}; NVIDIA/nccl src/transport/net_ib.cc) or the driver "
                     "offers DMA-BUF",
                     join(modules, " or "),
                     join(std::vector<std::string>(nccl_peer_memory_files().begin(),
                                                   nccl_peer_memory_files().end()),
                          ", ")),
         {{"infiniband", devices}, {std::string(kModulesFile), "no " + join(modules, ", no ")}},
         fmt::format("modprobe nvidia_peermem (it ships with the NVIDIA driver), and load it at "
                     "every boot: echo nvidia_peermem > {}",
                     kModulesLoadFile)});
  }
}

void check_shm(const ShmNeed& need, const Facts& facts, std::vector<Finding>& findings) {
  if (!facts.shm || !facts.shm->exists || facts.shm->problem) return;
  if (need.ranks < 2 || facts.shm->size_bytes >= kNcclShmMinimumBytes) return;
  findings.push_back(
      {need.severity,
       "shm-too-small",
       fmt::format("{} is {} MiB: NCCL's shared-memory transport between {} fails to initialise "
                   "(\"NCCL WARN Error: failed to extend /dev/shm/nccl-... to N bytes\")",
                   facts.shm->path, facts.shm->size_bytes >> 20, need.ranks_text),
       fmt::format("NCCL keeps its shared-memory buffers in /dev/shm, at least {} MiB for a "
                   "multi-GPU engine ({})",
                   kNcclShmMinimumBytes >> 20, kNcclShmSource),
       {{facts.shm->path, fmt::format("{} bytes (statvfs)", facts.shm->size_bytes)},
        {"ranks on this node", std::to_string(need.ranks)}},
       fmt::format("enlarge it: mount -o remount,size=16G {} (and the same size in /etc/fstab); "
                   "in a container, run it with --shm-size=16g or --ipc=host",
                   facts.shm->path)});
}

void check_node_os(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                   std::vector<Finding>& findings) {
  check_infiniband(profile, plan, facts, findings);
  const long long ranks = profile.gpus_per_node();
  check_shm({ranks, Severity::error, fmt::format("the {} ranks on this node", ranks)}, facts,
            findings);
  check_rendezvous_route(plan, facts, findings);
  check_other_profiles(profile, plan, facts, findings);
  check_shared_user(profile, facts, findings);
  check_model_fit(profile, plan, facts, findings);
  check_sandbox(profile, plan, facts, findings);
}

}  // namespace gl
