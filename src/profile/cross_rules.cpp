#include "profile/cross_rules.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

Result<void> check_engine(const ValueReader& r, Profile& profile) {
  const auto& engine = profile.engine;
  const std::string_view kind = engine_kind_name(engine.kind);
  if (engine.venv && engine.python)
    return fail_at(r.where("engine.python"), "set 'engine.venv' or 'engine.python', not both");
  switch (engine.kind) {
    case EngineKind::sglang:
      if (!engine.venv && !engine.python)
        return fail_at(r.where("engine"),
                       "engine kind 'sglang' needs 'engine.venv' or 'engine.python'");
      break;
    case EngineKind::vllm:
    case EngineKind::trtllm:
      if (!engine.venv && !engine.executable)
        return fail_at(r.where("engine"),
                       "engine kind '{}' needs 'engine.venv' or 'engine.executable'", kind);
      break;
    case EngineKind::command:
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
  if (engine.kind != EngineKind::command && !engine.argv.empty())
    return fail_at(r.where("engine.argv"),
                   "'engine.argv' is only for kind = \"command\"; use 'engine.args'");
  if (engine.cuda_graph_max_bs && engine.kind != EngineKind::sglang)
    return fail_at(r.where("engine.cuda_graph_max_bs"),
                   "'engine.cuda_graph_max_bs' applies to sglang only");
  return {};
}

Result<void> check_model(const ValueReader& r, Profile& profile) {
  if (profile.model.path.empty()) {
    if (profile.engine.kind == EngineKind::command) return {};  // its argv names the model
    return fail_at(r.where("model.path"), "missing required key 'model.path'");
  }
  if (profile.model.revision && profile.model.is_local())
    return fail_at(r.where("model.revision"),
                   "'model.revision' applies to hub ids, not local paths");
  return {};
}

Result<void> check_parallelism(const ValueReader& r, Profile& profile) {
  const auto& p = profile.parallelism;
  const EngineKind kind = profile.engine.kind;
  if (p.dp_attention && kind != EngineKind::sglang)
    return fail_at(r.where("parallelism.dp_attention"),
                   "'parallelism.dp_attention' applies to sglang only");
  if (p.dp_attention && p.tp % p.dp != 0)
    return fail_at(r.where("parallelism.dp"),
                   "with dp_attention, 'parallelism.dp' ({}) must divide 'parallelism.tp' ({})",
                   p.dp, p.tp);
  if ((kind == EngineKind::sglang || kind == EngineKind::trtllm) && p.tp % p.ep != 0)
    return fail_at(r.where("parallelism.ep"),
                   "'parallelism.ep' ({}) must divide 'parallelism.tp' ({})", p.ep, p.tp);
  if (kind == EngineKind::vllm && p.ep != 1 && p.ep != p.tp * p.dp)
    return fail_at(
        r.where("parallelism.ep"),
        "vLLM's expert parallelism spans tp x dp ranks: 'parallelism.ep' must be 1 or {}, got {}",
        p.tp * p.dp, p.ep);
  if (p.nodes > 1) {
    if (kind == EngineKind::trtllm)
      return fail_at(r.where("parallelism.nodes"),
                     "multi-node trtllm-serve is not supported; set 'parallelism.nodes' to 1");
    if (kind != EngineKind::command && !p.dist_init_addr)
      return fail_at(
          r.where("parallelism.nodes"),
          "'parallelism.nodes' = {} needs 'parallelism.dist_init_addr' (host:port of rank 0)",
          p.nodes);
  }
  return {};
}

Result<void> check_speculative(const ValueReader& r, Profile& profile) {
  if (!profile.speculative) return {};
  if (profile.engine.kind == EngineKind::command || profile.engine.kind == EngineKind::trtllm)
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
  bool dp_counts = profile.engine.kind == EngineKind::vllm ||
                   (profile.engine.kind == EngineKind::sglang && !p.dp_attention);
  if (dp_counts && p.dp > 1) text += fmt::format(" x dp {}", p.dp);
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
