#include "profile/cross_rules.hpp"

#include <tuple>

#include "catalog/engines.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

Result<void> check_engine(const ValueReader& r, Profile& profile) {
  const auto& engine = profile.engine;
  const EngineRow& row = engine_row(engine.kind);
  if (engine.venv && engine.python)
    return fail_at(r.where("engine.python"), "set 'engine.venv' or 'engine.python', not both");
  switch (row.launch) {
    case Launch::python_module:
      if (!engine.venv && !engine.python)
        return fail_at(r.where("engine"), "engine kind '{}' needs 'engine.venv' or 'engine.python'",
                       row.name);
      break;
    case Launch::venv_program:
      if (!engine.venv && !engine.executable)
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
  for (auto [key, set, knob] :
       {std::tuple{"engine.mem_fraction", engine.mem_fraction.has_value(),
                   &EngineRow::mem_fraction},
        std::tuple{"engine.max_requests", engine.max_requests.has_value(),
                   &EngineRow::max_requests},
        std::tuple{"engine.cuda_graph_max_bs", engine.cuda_graph_max_bs.has_value(),
                   &EngineRow::cuda_graph_max_bs}})
    if (set && (row.*knob).flag.empty())
      return fail_at(
          r.where(key), "'{}' applies to {} only", key,
          engine_kinds_where([knob](const EngineRow& other) { return !(other.*knob).flag.empty(); },
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
  }
  return {};
}

Result<void> check_speculative(const ValueReader& r, Profile& profile) {
  if (!profile.speculative) return {};
  if (!engine_row(profile.engine.kind).speculative)
    return fail_at(
        r.where("speculative"),
        "[speculative] is not rendered for engine kind '{}'; pass its flags in 'engine.args'",
        engine_kind_name(profile.engine.kind));
  return {};
}

Result<void> check_gpus(const ValueReader& r, Profile& profile) {
  if (profile.gpus.count && !profile.gpus.devices.empty())
    return fail_at(r.where("gpus.count"), "set 'gpus.devices' or 'gpus.count', not both");
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

std::string describe_world(const Profile& profile) {
  const auto& p = profile.parallelism;
  std::string text = fmt::format("tp {} x pp {}", p.tp, p.pp);
  if (profile.dp_counts_toward_gpus() && p.dp > 1) text += fmt::format(" x dp {}", p.dp);
  if (p.nodes > 1) text += fmt::format(" over {} nodes", p.nodes);
  return text;
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
                   describe_world(profile), key, profile.gpus.available());
  }
  return {};
}

}  // namespace

Result<void> check_cross_rules(const ValueReader& reader, Profile& profile) {
  for (auto rule : {check_engine, check_model, check_parallelism, check_speculative, check_gpus,
                    check_restart, check_layout})
    GL_TRY_VOID(rule(reader, profile));
  return {};
}

}  // namespace gl
