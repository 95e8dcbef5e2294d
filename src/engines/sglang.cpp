// SPDX-License-Identifier: Apache-2.0
#include "engines/engine_argv.hpp"

#include "catalog/shared_engine_flags.hpp"

namespace gl {

// Full flag names only: short forms work through argparse prefix matching and break when a
// new flag shares the prefix.
std::vector<std::string> sglang_argv(const Profile& profile, const LaunchOptions& options) {
  const auto& p = profile.parallelism;
  const EngineRow& row = engine_row(EngineKind::sglang);
  std::vector<std::string> argv = engine_launcher(profile, options);
  auto add = [&](std::string flag, std::string value) {
    argv.push_back(std::move(flag));
    argv.push_back(std::move(value));
  };
  add(std::string(row.model_flag), profile.model.path);
  add_parallel_size_flags(argv, p);
  if (p.ep > 1) add("--expert-parallel-size", std::to_string(p.ep));
  if (p.dp > 1) add(std::string(kDataParallelSizeFlag), std::to_string(p.dp));
  if (p.dp_attention) argv.push_back("--enable-dp-attention");
  if (p.nodes > 1) {
    add("--nnodes", std::to_string(p.nodes));
    add("--node-rank", std::to_string(options.node_rank));
    add("--dist-init-addr", *p.dist_init_addr);
  }
  add_server_flags(argv, profile, true);
  add_knob_flags(argv, profile, options);
  if (const auto& spec = profile.speculative) {
    // Validation refused a method SGLang does not have: this is its own spelling of it.
    const SpeculativeMethod* method = find_speculative_method(row, spec->algorithm);
    add("--speculative-algorithm", method ? std::string(method->name) : spec->algorithm);
    if (spec->draft_model) add("--speculative-draft-model-path", *spec->draft_model);
    if (spec->num_steps) add("--speculative-num-steps", std::to_string(*spec->num_steps));
    if (spec->eagle_topk) add("--speculative-eagle-topk", std::to_string(*spec->eagle_topk));
    if (spec->num_draft_tokens)
      add("--speculative-num-draft-tokens", std::to_string(*spec->num_draft_tokens));
  }
  return argv;
}

}  // namespace gl
