// SPDX-License-Identifier: Apache-2.0
#pragma once
// A lockfile: what a deployment was, in one deterministic, diffable JSON document. The merged
// profile and its hash, the node facts that decide whether kernels and the engine work, the
// model's identity, the hash of the rendered unit. Built from values; reading the model's small
// files (never its weights) is the only I/O.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"
#include "plan/launch_plan.hpp"
#include "profile/loader.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

inline constexpr int kLockFormat = 1;

struct LockBuild {
  nlohmann::ordered_json lock;
  // Why this lock pins less than it should (model missing, hub id without a revision). `lock`
  // refuses to write one with problems; `verify` compares what it could gather.
  std::vector<std::string> problems;
};

// The merged table as toml++ writes it: keys sorted, one canonical text per profile.
std::string canonical_profile_text(const toml::table& table);

// The model's identity. Local path: SHA-256 over the sorted "HASH  NAME" lines (sha256sum's
// format) of config.json, generation_config.json, tokenizer*.json, tokenizer.model,
// special_tokens_map.json and *.safetensors.index.json; weight shards are never read. Hub id:
// the id and the pinned revision.
nlohmann::ordered_json model_identity(const ModelSettings& model, const NodeFs& node,
                                      std::vector<std::string>& problems);

// The node's section: driver, GPUs, the toolkit the unit's JIT libraries pick (in `plan`'s
// environment), the Python stack.
nlohmann::ordered_json node_section(const Profile& profile, const LaunchPlan& plan,
                                    const Facts& facts);

// A whole facts file in the node section's shape, every toolkit listed: for `diff` of two nodes.
nlohmann::ordered_json facts_section(const Facts& facts);

// The unit's text without its comment header (which names source files), for `plan`'s rank,
// rendered for /usr/bin/gpulaunch so it is the same on every node.
std::string unit_text_for_lock(const Profile& profile, const LaunchPlan& plan);

// `plan`: make_launch_plan(profile) for the rank this node takes.
LockBuild make_lock(const MergedProfile& merged, const Profile& profile, const LaunchPlan& plan,
                    const Facts& facts, const NodeFs& node);

// The optional "cache_archive" section: {"sha256": HEX} of an archive `cache export` wrote, the
// caches this deployment is seeded from. `verify --cache-archive FILE` compares it (drift).
inline constexpr std::string_view kCacheArchiveKey = "cache_archive";
Result<void> add_cache_archive(nlohmann::ordered_json& lock, const std::filesystem::path& archive);

// 2-space indent, trailing newline.
std::string lock_text(const nlohmann::ordered_json& lock);

bool is_lock(const nlohmann::ordered_json& document);
Result<nlohmann::ordered_json> parse_lock(std::string_view text, const std::string& origin);
Result<nlohmann::ordered_json> load_lock_file(const std::filesystem::path& path);

}  // namespace gl
