#include "profile/profile.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace gl {

std::string_view engine_kind_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::sglang:
      return "sglang";
    case EngineKind::vllm:
      return "vllm";
    case EngineKind::trtllm:
      return "trtllm";
    case EngineKind::command:
      return "command";
  }
  return "unknown";
}

std::string_view engine_python_module(EngineKind kind) {
  switch (kind) {
    case EngineKind::sglang:
      return "sglang";
    case EngineKind::vllm:
      return "vllm";
    case EngineKind::trtllm:
      return "tensorrt_llm";
    case EngineKind::command:
      return "";
  }
  return "";
}

long long Profile::world_size() const {
  long long world = parallelism.tp * parallelism.pp;
  // vLLM and SGLang without dp-attention replicate the tp x pp group dp times; SGLang's
  // dp-attention and every engine's ep split the same GPUs differently.
  if (engine.kind == EngineKind::vllm ||
      (engine.kind == EngineKind::sglang && !parallelism.dp_attention))
    world *= parallelism.dp;
  return world;
}

std::string Profile::unit_name() const {
  return unit_name_for(name);
}

long long Profile::gpus_per_node() const {
  return world_size() / std::max<long long>(1, parallelism.nodes);
}

std::string Profile::world_text() const {
  const auto& p = parallelism;
  std::string text = fmt::format("tp {} x pp {}", p.tp, p.pp);
  // The dp factor world_size() counted (none where the engine splits, not replicates).
  const long long replicas = world_size() / std::max<long long>(1, p.tp * p.pp);
  if (replicas > 1) text += fmt::format(" x dp {}", replicas);
  if (p.nodes > 1) text += fmt::format(" over {} nodes", p.nodes);
  return text;
}

}  // namespace gl
