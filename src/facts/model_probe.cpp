// SPDX-License-Identifier: Apache-2.0
#include "facts/model_probe.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "catalog/hub_cache.hpp"
#include "catalog/node_requirements.hpp"
#include "util/json_file.hpp"
#include "util/safe_file.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

// An index lists every tensor: DeepSeek V3's is about 9 MB.
constexpr size_t kIndexLimit = 64 << 20;
constexpr size_t kConfigLimit = 1 << 20;

std::optional<std::string> read_model_file(const fs::path& directory, std::string_view name,
                                           size_t limit, ModelFact& fact) {
  auto read = read_regular_nofollow(directory / name, limit);
  if (!read) {
    fact.problems.push_back(read.error().message);
    return std::nullopt;
  }
  if (!*read) return std::nullopt;
  return std::move((*read)->content);
}

// metadata.total_size without parsing the whole weight map: the key is the index's only
// "total_size", and its value a plain integer.
std::optional<unsigned long long> index_total_size(std::string_view text) {
  constexpr std::string_view kKey = "\"total_size\"";
  auto at = text.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  at += kKey.size();
  while (at < text.size() && (text[at] == ' ' || text[at] == '\n' || text[at] == '\t' ||
                              text[at] == '\r' || text[at] == ':'))
    ++at;
  unsigned long long value = 0;
  auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() + at) return std::nullopt;
  return value;
}

std::optional<long long> integer(const nlohmann::json& config, const char* key) {
  auto found = config.find(key);
  if (found == config.end() || !found->is_number_integer()) return std::nullopt;
  long long value = found->get<long long>();
  return value > 0 ? std::optional(value) : std::nullopt;
}

void apply_config(std::string_view text, ModelFact& fact) {
  auto parsed = parse_bounded_json<nlohmann::json>(text, std::string(kModelConfig));
  if (!parsed || !parsed->is_object()) {
    fact.problems.push_back(parsed ? fmt::format("{} is not a JSON object", kModelConfig)
                                   : parsed.error().message);
    return;
  }
  // A multimodal model keeps its language model's shape in text_config (Kimi K2.5, Qwen-VL).
  const nlohmann::json* config = &*parsed;
  if (auto text_config = parsed->find("text_config");
      text_config != parsed->end() && text_config->is_object())
    config = &*text_config;
  fact.layers = integer(*config, "num_hidden_layers");
  fact.context = integer(*config, "max_position_embeddings");
  fact.kv_lora_rank = integer(*config, "kv_lora_rank");
  fact.rope_head_dim = integer(*config, "qk_rope_head_dim");
  auto heads = integer(*config, "num_attention_heads");
  fact.kv_heads = integer(*config, "num_key_value_heads");
  if (!fact.kv_heads) fact.kv_heads = heads;
  fact.head_dim = integer(*config, "head_dim");
  if (!fact.head_dim && heads)
    if (auto hidden = integer(*config, "hidden_size")) fact.head_dim = *hidden / *heads;
}

void read_config(const fs::path& directory, ModelFact& fact) {
  if (auto text = read_model_file(directory, kModelConfig, kConfigLimit, fact))
    apply_config(*text, fact);
}

// A snapshot's entry as huggingface_hub writes it: a relative link to ../../blobs/HASH. The blob
// it names inside `repo`, when the link says exactly that; nullopt for any other link.
std::optional<fs::path> blob_of(const fs::path& repo, const fs::path& entry) {
  std::error_code error;
  const fs::path target = fs::read_symlink(entry, error);
  if (error) return std::nullopt;
  const std::string prefix = std::string("../../") + std::string(kHubBlobsFolder) + "/";
  const std::string text = target.string();
  if (!text.starts_with(prefix)) return std::nullopt;
  const std::string blob = text.substr(prefix.size());
  if (blob.empty() || blob.find('/') != std::string::npos || blob == "." || blob == "..")
    return std::nullopt;
  return repo / kHubBlobsFolder / blob;
}

}  // namespace

bool is_weight_file(std::string_view name) {
  for (auto suffix : weight_file_suffixes())
    if (name.ends_with(suffix)) return true;
  return false;
}

ModelFact probe_model(const NodeFs& node, const std::string& model_path) {
  ModelFact fact;
  fact.path = model_path;
  // The model's own path may go through links (/models -> /data/models), resolved inside the
  // root; nothing inside it is followed.
  const auto resolved = node.resolve(model_path);
  if (!resolved) return fact;
  const fs::path where = node.root() / fs::path(*resolved).relative_path();
  std::error_code error;
  auto status = fs::symlink_status(where, error);
  if (error || !fs::exists(status)) return fact;
  if (fs::is_regular_file(status)) {
    fact.weights_bytes = fs::file_size(where, error);
    fact.weights_source = "the file's size";
    if (error) fact.weights_bytes.reset();
    return fact;
  }
  if (!fs::is_directory(status)) return fact;
  read_config(where, fact);
  if (auto index = read_model_file(where, kSafetensorsIndex, kIndexLimit, fact))
    if (auto total = index_total_size(*index)) {
      fact.weights_bytes = *total;
      fact.weights_source = fmt::format("{} metadata.total_size", kSafetensorsIndex);
      return fact;
    }
  unsigned long long sum = 0;
  long long files = 0;
  for (fs::directory_iterator it(where, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!is_weight_file(name)) continue;
    auto entry_status = it->symlink_status(error);
    if (error) break;
    if (fs::is_symlink(entry_status)) {
      ++fact.links_skipped;
      continue;
    }
    if (!fs::is_regular_file(entry_status)) continue;
    sum += it->file_size(error);
    if (error) break;
    ++files;
  }
  if (error)
    fact.problems.push_back(fmt::format("Failed to list '{}': {}", model_path, error.message()));
  if (files > 0) {
    fact.weights_bytes = sum;
    fact.weights_source = fmt::format("{} weight file(s) (*.safetensors, *.bin, *.gguf)", files);
  }
  return fact;
}

ModelFact probe_hub_model(const NodeFs& node, const std::string& hub_cache,
                          const std::string& repo_id) {
  ModelFact fact;
  fact.path = repo_id;
  const auto cache = node.host_path(hub_cache);
  if (!cache) return fact;
  const fs::path repo = *cache / hub_repo_folder(repo_id);
  std::string commit;
  auto ref = read_regular_nofollow(repo / kHubRefsFolder / kHubDefaultRevision, 4096);
  if (ref && *ref) {
    commit = (*ref)->content;
    while (!commit.empty() && (commit.back() == '\n' || commit.back() == ' ')) commit.pop_back();
  }
  std::error_code error;
  const fs::path snapshots = repo / kHubSnapshotsFolder;
  if (commit.empty() || commit.find('/') != std::string::npos)
    for (fs::directory_iterator it(snapshots, error), end; !error && it != end; it.increment(error))
      if (it->is_directory(error) && !it->is_symlink(error))
        commit = std::max(commit, it->path().filename().string());
  if (commit.empty()) return fact;
  const fs::path snapshot = snapshots / commit;
  if (fs::is_symlink(fs::symlink_status(snapshot, error)) || !fs::is_directory(snapshot, error))
    return fact;
  unsigned long long sum = 0;
  long long files = 0;
  for (fs::directory_iterator it(snapshot, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    const bool weights = is_weight_file(name);
    if (!weights && name != kModelConfig) continue;
    // The snapshot links into blobs/: only that link is taken, never one pointing elsewhere.
    std::optional<fs::path> file = it->path();
    if (it->is_symlink(error)) file = blob_of(repo, it->path());
    if (!file) {
      ++fact.links_skipped;
      continue;
    }
    if (!weights) {
      auto read = read_regular_nofollow(*file, kConfigLimit);
      if (read && *read) apply_config((*read)->content, fact);
      continue;
    }
    const auto status = fs::symlink_status(*file, error);
    if (error || !fs::is_regular_file(status)) continue;
    sum += fs::file_size(*file, error);
    if (error) break;
    ++files;
  }
  if (files > 0) {
    fact.weights_bytes = sum;
    fact.weights_source = fmt::format("{} weight file(s) in the hub cache's snapshot {}", files,
                                      commit.substr(0, 12));
  }
  return fact;
}

}  // namespace gl
