// SPDX-License-Identifier: Apache-2.0
#include "facts/model_probe.hpp"

#include <charconv>
#include <filesystem>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

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

void read_config(const fs::path& directory, ModelFact& fact) {
  auto text = read_model_file(directory, kModelConfig, kConfigLimit, fact);
  if (!text) return;
  auto parsed = parse_bounded_json<nlohmann::json>(*text, std::string(kModelConfig));
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
  const fs::path where = node.root() / fs::path(node.resolve(model_path)).relative_path();
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

}  // namespace gl
