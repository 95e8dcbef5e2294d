#include "profile/profile.hpp"

#include <algorithm>

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

std::string unit_name_for(std::string_view name) {
  return "gpulaunch-" + std::string(name) + ".service";
}

std::string Profile::unit_name() const {
  return unit_name_for(name);
}

long long Profile::gpus_per_node() const {
  return world_size() / std::max<long long>(1, parallelism.nodes);
}

}  // namespace gl
