// SPDX-License-Identifier: Apache-2.0
#include "engines/engine_argv.hpp"

namespace gl {

std::vector<std::string> trtllm_argv(const Profile& profile, const LaunchOptions& options) {
  const auto& p = profile.parallelism;
  const EngineRow& row = engine_row(EngineKind::trtllm);
  std::vector<std::string> argv = engine_launcher(profile, options);
  argv.push_back(profile.model.path);
  argv.insert(argv.end(), row.fixed_args.begin(), row.fixed_args.end());
  argv.insert(argv.end(),
              {"--tp_size", std::to_string(p.tp), "--pp_size", std::to_string(p.pp), "--ep_size",
               std::to_string(p.ep), std::string(row.host_flag), profile.server.host,
               std::string(row.port_flag), std::to_string(profile.server.port)});
  add_knob_flags(argv, profile, options);
  return argv;
}

}  // namespace gl
