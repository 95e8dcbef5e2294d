// SPDX-License-Identifier: Apache-2.0
#include <nlohmann/json.hpp>

#include "catalog/shared_engine_flags.hpp"
#include "engines/engine_argv.hpp"

namespace gl {

std::vector<std::string> vllm_argv(const Profile& profile, const LaunchOptions& options) {
  const auto& p = profile.parallelism;
  const EngineRow& row = engine_row(EngineKind::vllm);
  std::vector<std::string> argv = engine_launcher(profile, options);
  argv.insert(argv.end(), {"serve", profile.model.path});
  auto add = [&](std::string flag, std::string value) {
    argv.push_back(std::move(flag));
    argv.push_back(std::move(value));
  };
  add_parallel_size_flags(argv, p);
  if (p.dp > 1) add(std::string(kDataParallelSizeFlag), std::to_string(p.dp));
  if (p.ep > 1) argv.push_back("--enable-expert-parallel");
  if (p.nodes > 1) {
    const MultiNodeFlags& flags = *row.multi_node_flags;
    auto [host, port] = split_host_port(*p.dist_init_addr);
    const long long rank = options.node_rank;
    if (p.dp > 1) {
      // Whole replicas on each node (validation: dp is a multiple of nodes); rank 0 runs the
      // API server in front of all of them. A start rank on rank 0 would select vLLM's hybrid
      // load balancing instead (serve.py), so it goes to the headless ranks only.
      const long long local = p.dp / p.nodes;
      add(std::string(flags.dp_size_local), std::to_string(local));
      if (rank > 0) add(std::string(flags.dp_start_rank), std::to_string(rank * local));
      add(std::string(flags.dp_address), host);
      add(std::string(flags.dp_rpc_port), port);
    } else {
      // A vLLM without these has no multi-node tp x pp of its own: `check` refuses it.
      add(fitted_flag(row.kind, flags.nnodes, options), std::to_string(p.nodes));
      add(fitted_flag(row.kind, flags.node_rank, options), std::to_string(rank));
      add(fitted_flag(row.kind, flags.master_addr, options), host);
      add(fitted_flag(row.kind, flags.master_port, options), port);
    }
    if (rank_role(profile, rank) == RankRole::headless) argv.emplace_back(flags.headless);
  }
  add_server_flags(argv, profile, true);
  add_knob_flags(argv, profile, options);
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
