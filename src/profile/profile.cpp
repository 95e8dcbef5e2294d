// SPDX-License-Identifier: Apache-2.0
#include "profile/profile.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace gl {

long long Profile::world_size() const {
  long long world = parallelism.tp * parallelism.pp;
  if (dp_counts_toward_gpus()) world *= parallelism.dp;
  return world;
}

bool Profile::dp_counts_toward_gpus() const {
  // Replicas of the tp x pp group need GPUs of their own; SGLang's dp-attention and every
  // engine's ep split the same GPUs differently.
  switch (engine_row(engine.kind).dp_gpus) {
    case DpGpus::replicas:
      return true;
    case DpGpus::replicas_unless_dp_attention:
      return !parallelism.dp_attention;
    case DpGpus::none:
      return false;
  }
  return false;
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
  if (dp_counts_toward_gpus() && p.dp > 1) text += fmt::format(" x dp {}", p.dp);
  if (p.nodes > 1) text += fmt::format(" over {} nodes", p.nodes);
  return text;
}

}  // namespace gl
