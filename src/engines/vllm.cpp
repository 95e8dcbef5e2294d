// SPDX-License-Identifier: Apache-2.0
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engines/engine_argv.hpp"

namespace gl {

std::vector<std::string> vllm_argv(const Profile& profile, const LaunchOptions& options) {
  const auto& p = profile.parallelism;
  const EngineRow& row = engine_row(EngineKind::vllm);
  std::vector<std::string> argv = engine_launcher(profile, options);
  argv.insert(argv.end(),
              {"serve", profile.model.path, "--tensor-parallel-size", std::to_string(p.tp)});
  auto add = [&](std::string flag, std::string value) {
    argv.push_back(std::move(flag));
    argv.push_back(std::move(value));
  };
  if (p.pp > 1) add("--pipeline-parallel-size", std::to_string(p.pp));
  if (p.dp > 1) add("--data-parallel-size", std::to_string(p.dp));
  if (p.ep > 1) argv.push_back("--enable-expert-parallel");
  if (p.nodes > 1) {
    const std::string& address = *p.dist_init_addr;
    const auto colon = address.rfind(':');
    add("--nnodes", std::to_string(p.nodes));
    add("--node-rank", std::to_string(options.node_rank));
    // torch.distributed takes an IPv6 master address bare: "[fd00::1]:5000" -> "fd00::1".
    std::string host = address.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    add("--master-addr", host);
    add("--master-port", address.substr(colon + 1));
  }
  add(std::string(row.host_flag), profile.server.host);
  add(std::string(row.port_flag), std::to_string(profile.server.port));
  if (profile.model.served_name) add(std::string(row.served_name_flag), *profile.model.served_name);
  if (profile.model.revision) add("--revision", *profile.model.revision);
  if (profile.engine.mem_fraction)
    add(std::string(row.mem_fraction.flag), fmt::format("{}", *profile.engine.mem_fraction));
  if (profile.engine.max_requests)
    add(std::string(row.max_requests.flag), std::to_string(*profile.engine.max_requests));
  if (const auto& spec = profile.speculative) {
    // Validation refused a method vLLM does not have: this is its own spelling of it.
    const SpeculativeMethod* method = find_speculative_method(row, spec->algorithm);
    nlohmann::ordered_json config{{"method", method ? std::string(method->name) : spec->algorithm}};
    if (spec->draft_model) config["model"] = *spec->draft_model;
    // num_speculative_tokens counts the proposed tokens: num_steps of one-token steps, which
    // SGLang's num_draft_tokens exceeds by the one it verifies besides (num_steps + 1).
    if (spec->num_steps)
      config["num_speculative_tokens"] = *spec->num_steps;
    else if (spec->num_draft_tokens)
      config["num_speculative_tokens"] = *spec->num_draft_tokens - 1;
    add("--speculative-config", config.dump());
  }
  return argv;
}

}  // namespace gl
