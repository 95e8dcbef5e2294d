// SPDX-License-Identifier: Apache-2.0
#include "profile/cross_rules.hpp"

#include <algorithm>
#include <cctype>
#include "profile/unsafe_directives.hpp"

#include "catalog/completion_api.hpp"
#include "catalog/engine_knobs.hpp"
#include "catalog/engines.hpp"
#include "catalog/sandbox_allowances.hpp"
#include "profile/api_key.hpp"
#include "util/did_you_mean.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// Directives gpulaunch writes itself; service.extra may not replace them.
constexpr std::string_view kOwnedDirectives[] = {"Type",         "ExecStart",   "NotifyAccess",
                                                 "ExecStopPost", "Environment", "WatchdogSec"};

Result<void> check_engine(const ValueReader& r, Profile& profile) {
  const auto& engine = profile.engine;
  const EngineRow& row = engine_row(engine.kind);
  if (engine.venv && engine.python)
    return fail_at(r.where("engine.python"), "set 'engine.venv' or 'engine.python', not both");
  // An image carries its own Python and launcher: nothing of the host's runs the engine.
  if (engine.image)
    for (auto [key, set] : {std::pair{"engine.venv", engine.venv.has_value()},
                            std::pair{"engine.python", engine.python.has_value()},
                            std::pair{"engine.executable", engine.executable.has_value()}})
      if (set)
        return fail_at(r.where(key),
                       "set 'engine.image' or '{}', not both (the image holds the "
                       "engine)",
                       key);
  if (engine.image && row.launch != Launch::python_module && row.launch != Launch::venv_program)
    return fail_at(r.where("engine.image"),
                   "engine kind '{}' does not run from an image; 'engine.image' is for {}",
                   row.name,
                   engine_kinds_where(
                       [](const EngineRow& candidate) {
                         return candidate.launch == Launch::python_module ||
                                candidate.launch == Launch::venv_program;
                       },
                       "or"));
  switch (row.launch) {
    case Launch::python_module:
      if (!engine.venv && !engine.python && !engine.image)
        return fail_at(r.where("engine"), "engine kind '{}' needs 'engine.venv' or 'engine.python'",
                       row.name);
      break;
    case Launch::venv_program:
      if (!engine.venv && !engine.executable && !engine.image)
        return fail_at(r.where("engine"),
                       "engine kind '{}' needs 'engine.venv' or 'engine.executable'", row.name);
      break;
    case Launch::executable:
      if (engine.venv || engine.python) {
        const char* key = engine.venv ? "engine.venv" : "engine.python";
        return fail_at(r.where(key),
                       "engine kind '{}' runs no Python; set 'engine.executable', not '{}'",
                       row.name, key);
      }
      if (!engine.executable)
        return fail_at(r.where("engine"),
                       "engine kind '{}' needs 'engine.executable' (the path of {})", row.name,
                       row.program);
      break;
    case Launch::argv:
      if (engine.argv.empty())
        return fail_at(r.where("engine.argv"), "engine kind 'command' needs 'engine.argv'");
      if (!is_absolute_path(engine.argv.front()))
        return fail_at(r.where("engine.argv"),
                       "'engine.argv' must start with an absolute path, got '{}'",
                       engine.argv.front());
      if (engine.argv.front().find_first_of("\"'\\") != std::string::npos)
        return fail_at(r.where("engine.argv"),
                       "'engine.argv' executable path must not contain quotes or backslashes "
                       "(systemd cannot load it)");
      break;
  }
  if (row.launch != Launch::argv && !engine.argv.empty())
    return fail_at(r.where("engine.argv"),
                   "'engine.argv' is only for kind = \"command\"; use 'engine.args'");
  // A knob the engine has no flag for would be accepted and change nothing.
  for (const EngineKnobKey& knob : engine_knob_keys())
    if (engine.knobs.contains(knob.key) && engine_knob_flag(knob, engine.kind).empty())
      return fail_at(r.where(knob.key), "'{}' applies to {} only", knob.key,
                     engine_kinds_where(
                         [&knob](const EngineRow& other) {
                           return !engine_knob_flag(knob, other.kind).empty();
                         },
                         "and"));
  return {};
}

Result<void> check_model(const ValueReader& r, Profile& profile) {
  if (profile.model.path.empty()) {
    // A command's argv names the model.
    if (engine_row(profile.engine.kind).model == ModelSource::in_argv) return {};
    return fail_at(r.where("model.path"), "missing required key 'model.path'");
  }
  if (engine_row(profile.engine.kind).model == ModelSource::local_file && !profile.model.is_local())
    return fail_at(r.where("model.path"),
                   "engine kind '{}' serves a local model file: 'model.path' must be an absolute "
                   "path, got '{}'",
                   engine_kind_name(profile.engine.kind), profile.model.path);
  if (profile.model.revision && profile.model.is_local())
    return fail_at(r.where("model.revision"),
                   "'model.revision' applies to hub ids, not local paths");
  return {};
}

// parallelism.nodes follows nodes.hosts (or must equal it), and dist_init_addr defaults to the
// first host.
Result<void> check_nodes(const ValueReader& r, Profile& profile) {
  const auto& hosts = profile.nodes.hosts;
  if (hosts.empty()) return {};
  auto& p = profile.parallelism;
  const auto count = static_cast<long long>(hosts.size());
  if (r.node_at("parallelism.nodes") && p.nodes != count)
    return fail_at(r.where("parallelism.nodes"),
                   "'parallelism.nodes' = {} but 'nodes.hosts' lists {} host(s); they must agree",
                   p.nodes, count);
  p.nodes = count;
  if (!p.dist_init_addr)
    p.dist_init_addr = fmt::format("{}:{}", hosts.front(), profile.nodes.dist_init_port);
  return {};
}

Result<void> check_parallelism(const ValueReader& r, Profile& profile) {
  const auto& p = profile.parallelism;
  const EngineRow& row = engine_row(profile.engine.kind);
  if (!row.splits_ranks)
    for (auto [key, value] : {std::pair{"parallelism.tp", p.tp}, std::pair{"parallelism.pp", p.pp},
                              std::pair{"parallelism.ep", p.ep}, std::pair{"parallelism.dp", p.dp}})
      if (value > 1)
        return fail_at(r.where(key),
                       "'{}' = {} does not apply to engine kind '{}': {}; set it to 1", key, value,
                       row.name, row.no_ranks_hint);
  if (p.dp_attention && !row.dp_attention)
    return fail_at(
        r.where("parallelism.dp_attention"), "'parallelism.dp_attention' applies to {} only",
        engine_kinds_where([](const EngineRow& other) { return other.dp_attention; }, "and"));
  if (p.dp_attention && p.tp % p.dp != 0)
    return fail_at(r.where("parallelism.dp"),
                   "with dp_attention, 'parallelism.dp' ({}) must divide 'parallelism.tp' ({})",
                   p.dp, p.tp);
  if (row.ep_rule == EpRule::divides_tp && p.tp % p.ep != 0)
    return fail_at(r.where("parallelism.ep"),
                   "'parallelism.ep' ({}) must divide 'parallelism.tp' ({})", p.ep, p.tp);
  if (row.ep_rule == EpRule::one_or_tp_times_dp && p.ep != 1 && p.ep != p.tp * p.dp)
    return fail_at(
        r.where("parallelism.ep"),
        "vLLM's expert parallelism spans tp x dp ranks: 'parallelism.ep' must be 1 or {}, got {}",
        p.tp * p.dp, p.ep);
  if (p.nodes > 1) {
    if (!row.multi_node)
      return fail_at(r.where("parallelism.nodes"),
                     "multi-node {} is not supported; set 'parallelism.nodes' to 1", row.display);
    // A command's argv carries its own rendezvous.
    if (row.launch != Launch::argv && !p.dist_init_addr)
      return fail_at(
          r.where("parallelism.nodes"),
          "'parallelism.nodes' = {} needs 'parallelism.dist_init_addr' (host:port of rank 0)",
          p.nodes);
    // vLLM spreads data parallelism over nodes as whole replicas per node
    // (--data-parallel-size-local, catalog/engines); a replica split over nodes is not a layout
    // its headless ranks can start.
    const MultiNodeFlags* flags = row.multi_node_flags;
    if (flags && !flags->dp_size_local.empty() && p.dp > 1 && p.dp % p.nodes != 0)
      return fail_at(r.where("parallelism.dp"),
                     "multi-node {} runs whole data-parallel replicas on each node: "
                     "'parallelism.dp' ({}) must be a multiple of 'parallelism.nodes' ({})",
                     row.display, p.dp, p.nodes);
  }
  return {};
}

// The method must be the chosen engine's: SGLang's and vLLM's names differ (NEXTN is vLLM's
// mtp), and a name the other engine has gets that engine's spelling as the hint.
Result<void> check_speculative_method(const ValueReader& r, const EngineRow& row,
                                      const std::string& algorithm) {
  if (find_speculative_method(row, algorithm)) return {};
  const auto where = r.where("speculative.algorithm");
  for (const EngineRow& other : engine_rows()) {
    if (other.kind == row.kind) continue;
    const SpeculativeMethod* theirs = find_speculative_method(other, algorithm);
    if (!theirs) continue;
    if (const SpeculativeMethod* ours = find_speculative_method(row, theirs->elsewhere))
      return fail_at(where, "'speculative.algorithm' \"{}\" is {}'s name; {} calls it \"{}\"",
                     algorithm, other.display, row.display, ours->name);
    return fail_at(where, "'speculative.algorithm' \"{}\" is {}'s; {} has no such method",
                   algorithm, other.display, row.display);
  }
  // Typos are looked for case-blind, as the methods are matched.
  auto lower = [](std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  std::vector<std::string> candidates;
  std::string listed;
  for (const auto& method : row.speculative_methods) {
    candidates.push_back(lower(method.name));
    listed += (listed.empty() ? "" : ", ") + std::string(method.name);
  }
  if (auto best = did_you_mean(lower(algorithm), candidates))
    return fail_at(where, "unknown 'speculative.algorithm' \"{}\" for {} (did you mean '{}'?)",
                   algorithm, row.display, find_speculative_method(row, *best)->name);
  return fail_at(where, "unknown 'speculative.algorithm' \"{}\" for {} (it has {})", algorithm,
                 row.display, listed);
}

// SGLang verifies num_steps + 1 tokens when eagle_topk is 1 (it overrides any other
// num_draft_tokens: python/sglang/srt/arg_groups/speculative_hook.py, sgl-project/sglang
// d9ccf6a); vLLM's num_speculative_tokens (vllm/config/speculative.py) counts only
// the proposed ones, one chain of them.
Result<void> check_speculative_tokens(const ValueReader& r, const EngineRow& row,
                                      const SpeculativeSettings& spec) {
  const bool vllm = row.kind == EngineKind::vllm;
  if (vllm && spec.eagle_topk && *spec.eagle_topk > 1)
    return fail_at(r.where("speculative.eagle_topk"),
                   "'speculative.eagle_topk' = {} is SGLang's tree drafting; vLLM proposes one "
                   "chain of tokens (set 'speculative.num_steps')",
                   *spec.eagle_topk);
  const bool chain =
      vllm ? !spec.eagle_topk || *spec.eagle_topk == 1 : spec.eagle_topk && *spec.eagle_topk == 1;
  if (chain && spec.num_steps && spec.num_draft_tokens &&
      *spec.num_draft_tokens != *spec.num_steps + 1)
    return fail_at(r.where("speculative.num_draft_tokens"),
                   "'speculative.num_draft_tokens' = {} does not match 'speculative.num_steps' = "
                   "{}: drafting one token per step verifies num_steps + 1 = {}",
                   *spec.num_draft_tokens, *spec.num_steps, *spec.num_steps + 1);
  if (vllm && !spec.num_steps && spec.num_draft_tokens && *spec.num_draft_tokens < 2)
    return fail_at(r.where("speculative.num_draft_tokens"),
                   "'speculative.num_draft_tokens' = {} leaves vLLM no token to propose "
                   "(num_speculative_tokens is num_draft_tokens - 1)",
                   *spec.num_draft_tokens);
  return {};
}

Result<void> check_speculative(const ValueReader& r, Profile& profile) {
  if (!profile.speculative) return {};
  const EngineRow& row = engine_row(profile.engine.kind);
  if (!row.speculative)
    return fail_at(
        r.where("speculative"),
        "[speculative] is not rendered for engine kind '{}'; pass its flags in 'engine.args'",
        engine_kind_name(profile.engine.kind));
  GL_TRY_VOID(check_speculative_method(r, row, profile.speculative->algorithm));
  return check_speculative_tokens(r, row, *profile.speculative);
}

Result<void> check_gpus(const ValueReader& r, Profile& profile) {
  if (profile.gpus.count && !profile.gpus.devices.empty())
    return fail_at(r.where("gpus.count"), "set 'gpus.devices' or 'gpus.count', not both");
  // A MIG instance: only engines that can use one, and then alone (catalog/engines, MigSupport).
  const auto& devices = profile.gpus.devices;
  const EngineRow& row = engine_row(profile.engine.kind);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!devices[i].starts_with("MIG-")) continue;
    const Location at = r.location(*r.node_at("gpus.devices")->as_array()->get(i));
    if (row.mig == MigSupport::none)
      return fail_at(at,
                     "'gpus.devices' entry {} is a MIG instance, which engine kind '{}' cannot "
                     "use ({}); give it a whole GPU (an index or a GPU- UUID)",
                     i, row.name, row.mig_source);
    if (devices.size() > 1 || profile.gpus_per_node() > 1)
      return fail_at(at,
                     "'gpus.devices' entry {} is a MIG instance: a process sees one MIG instance "
                     "and NCCL none, so it must be the only device of a one-rank engine",
                     i);
  }
  return {};
}

// The upgrade gate asks the engine's completions API: an engine the catalog has none for would
// be refused at every `up` of a change, long after the profile was written.
Result<void> check_upgrade_gate(const ValueReader& r, Profile& profile) {
  if (profile.gate.enabled() && !completion_api(profile.engine.kind))
    return fail_at(
        r.where("gate.prompts"), "'gate.prompts' applies to {} only",
        engine_kinds_where([](const EngineRow& row) { return completion_api(row.kind) != nullptr; },
                           "and"));
  return {};
}

Result<void> check_restart(const ValueReader& r, Profile& profile) {
  const auto& restart = profile.restart;
  if (restart.max_delay < restart.delay)
    return fail_at(r.where("restart.max_delay"),
                   "'restart.max_delay' ({}) is below 'restart.delay' ({})",
                   format_duration(restart.max_delay), format_duration(restart.delay));
  return {};
}

// service.extra and service.unit_extra: whole lines, none that gpulaunch writes itself, and
// nothing root-equivalent unless service.allow_unsafe_extra says so.
Result<void> check_service(const ValueReader& r, Profile& profile) {
  const auto& service = profile.service;
  // service.allow: only what catalog/sandbox_allowances vets.
  if (const toml::node* node = r.node_at("service.allow")) {
    const auto names = sandbox_allowance_names();
    for (size_t i = 0; i < service.allow.size(); ++i)
      if (!sandbox_allowance(service.allow[i])) {
        std::string list;
        for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
        return fail_at(r.location(*node->as_array()->get(i)),
                       "'service.allow' has no allowance '{}'{}; it allows: {}", service.allow[i],
                       did_you_mean_suffix(service.allow[i], names), list);
      }
  }
  for (auto [key, lines] : {std::pair{"service.extra", &service.extra},
                            std::pair{"service.unit_extra", &service.unit_extra}}) {
    const toml::node* node = r.node_at(key);
    for (size_t i = 0; i < lines->size(); ++i) {
      const Location at = r.location(*node->as_array()->get(i));
      const std::string& line = (*lines)[i];
      if (line.ends_with('\\'))
        return fail_at(at,
                       "'{}' entries must not end with '\\' (systemd would join the next "
                       "line to it)",
                       key);
      std::string_view name = std::string_view(line).substr(0, line.find('='));
      for (auto owned : kOwnedDirectives)
        if (name == owned)
          return fail_at(at, "'{}' may not set {}= (gpulaunch writes it)", key, name);
      if (service.allow_unsafe_extra) continue;
      if (auto reason = unsafe_directive_reason(line))
        return fail_at(at,
                       "'{}' may not hold '{}': {} (only with 'service.allow_unsafe_extra = "
                       "true', which makes the profile root-equivalent)",
                       key, line, *reason);
    }
  }
  return {};
}

// A secret NAME sets NAME_PATH (and keeps NAME's value out of the unit): env may set neither.
Result<void> check_env(const ValueReader& r, Profile& profile) {
  const toml::node* node = r.node_at("env");
  if (!node) return {};
  for (auto&& [key, value] : *node->as_table()) {
    const std::string name{key.str()};
    for (const auto& [secret, file] : profile.secrets)
      if (name == secret || name == secret + "_PATH")
        return fail_at(r.key_location(key, value),
                       "'env.{}' is set by 'secrets.{}' (its value stays out of the unit)", name,
                       secret);
  }
  return {};
}

// Ranks split evenly over the nodes, and a node has the GPUs its share needs; without
// gpus.devices or gpus.count the engine gets the first that many.
Result<void> check_layout(const ValueReader& r, Profile& profile) {
  const auto& p = profile.parallelism;
  const long long world = profile.world_size();
  if (world % p.nodes != 0)
    return fail_at(r.where("parallelism.nodes"), "{} ranks do not split evenly over {} nodes",
                   world, p.nodes);
  const long long needed = profile.gpus_per_node();
  if (profile.gpus.available() == 0) {
    profile.gpus.count = needed;
    return {};
  }
  if (needed > profile.gpus.available()) {
    const char* key = profile.gpus.devices.empty() ? "gpus.count" : "gpus.devices";
    return fail_at(r.where(key), "the engine needs {} GPUs per node ({}) but '{}' gives {}", needed,
                   profile.world_text(), key, profile.gpus.available());
  }
  return {};
}

// server.liveness and server.ready ask for what the engine's API has (catalog/engines'
// liveness facts): a generation probe, or Prometheus metrics.
Result<void> check_liveness(const ValueReader& r, Profile& profile) {
  const EngineRow& row = engine_row(profile.engine.kind);
  const ServerSettings& server = profile.server;
  const bool has_probe = !row.liveness.probe.path.empty();
  const bool has_metrics = !row.liveness.metrics.path.empty();
  if (server.liveness == LivenessMode::generate && !has_probe)
    return fail_at(r.where("server.liveness"),
                   "'server.liveness' \"generate\" needs a generation API gpulaunch knows; {} has "
                   "none (use \"health\" or \"off\")",
                   row.display);
  if (server.liveness == LivenessMode::metrics && !has_metrics)
    return fail_at(r.where("server.liveness"),
                   "'server.liveness' \"metrics\" needs the engine's Prometheus metrics; {} has "
                   "none (use {})",
                   row.display, has_probe ? "\"generate\" or \"health\"" : "\"health\"");
  // Metrics without an in-flight gauge only vouch for a probe; alone they can tell no stall.
  if (server.liveness == LivenessMode::metrics && row.liveness.metrics.in_flight.empty())
    return fail_at(r.where("server.liveness"),
                   "'server.liveness' \"metrics\" needs a gauge of the requests in flight; {}'s "
                   "{} has none, so only its generation probe can tell a stall (use {})",
                   row.display, row.liveness.metrics.path,
                   has_probe ? "\"generate\" or \"health\"" : "\"health\"");
  if (server.ready == ReadyOn::generate && !has_probe)
    return fail_at(r.where("server.ready"),
                   "'server.ready' \"generate\" needs a generation API gpulaunch knows; {} has "
                   "none (use \"health\")",
                   row.display);
  const ApiKeyUse key = find_api_key(row.liveness.api_key, profile.engine.args, profile);
  if (server.ready == ReadyOn::generate && !key.usable())
    return fail_at(r.where("server.ready"),
                   "'server.ready' \"generate\" cannot send its probe: {} on {} needs the API key "
                   "({}), which gpulaunch takes only from [secrets] ({}use \"health\")",
                   row.liveness.probe.path, row.display, key.where,
                   row.liveness.api_key.variables.empty()
                       ? std::string()
                       : fmt::format("put it in [secrets] as {}, or ",
                                     row.liveness.api_key.variables.front()));
  if (server.liveness_timeout < server.liveness_interval)
    return fail_at(r.where("server.liveness_timeout"),
                   "'server.liveness_timeout' ({}) must be at least 'server.liveness_interval' "
                   "({}): a stall is judged over at least one look",
                   format_duration(server.liveness_timeout),
                   format_duration(server.liveness_interval));
  return {};
}

}  // namespace

Result<void> check_cross_rules(const ValueReader& reader, Profile& profile) {
  for (auto rule :
       {check_engine, check_model, check_nodes, check_parallelism, check_speculative, check_gpus,
        check_upgrade_gate, check_restart, check_service, check_env, check_layout, check_liveness})
    GL_TRY_VOID(rule(reader, profile));
  return {};
}

}  // namespace gl
