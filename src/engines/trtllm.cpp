#include <fmt/core.h>

#include "engines/engine_argv.hpp"

namespace gl {

std::vector<std::string> trtllm_argv(const Profile& profile, const LaunchOptions& /*options*/) {
  const auto& p = profile.parallelism;
  std::vector<std::string> argv{
      profile.engine.executable.value_or(venv_program(profile, "trtllm-serve")),
      profile.model.path,
      "--backend",
      "pytorch",
      "--tp_size",
      std::to_string(p.tp),
      "--pp_size",
      std::to_string(p.pp),
      "--ep_size",
      std::to_string(p.ep),
      "--host",
      profile.server.host,
      "--port",
      std::to_string(profile.server.port)};
  if (profile.engine.mem_fraction) {
    argv.push_back("--kv_cache_free_gpu_memory_fraction");
    argv.push_back(fmt::format("{}", *profile.engine.mem_fraction));
  }
  if (profile.engine.max_requests) {
    argv.push_back("--max_batch_size");
    argv.push_back(std::to_string(*profile.engine.max_requests));
  }
  return argv;
}

}  // namespace gl
