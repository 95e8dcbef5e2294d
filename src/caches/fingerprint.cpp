// SPDX-License-Identifier: Apache-2.0
#include "caches/fingerprint.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace gl {
namespace {

std::string join_sorted(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::string text;
  for (const auto& value : values) {
    if (!text.empty()) text += ',';
    text += value;
  }
  return text;
}

}  // namespace

std::string escape_value(std::string_view value) {
  std::string text;
  for (char c : value) {
    if (c == '\\')
      text += "\\\\";
    else if (c == '\n')
      text += "\\n";
    else
      text += c;
  }
  return text;
}

std::optional<std::string> unescape_value(std::string_view text) {
  std::string value;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == '\0') return std::nullopt;
    if (c != '\\') {
      value += c;
      continue;
    }
    if (++i == text.size()) return std::nullopt;
    if (text[i] == '\\')
      value += '\\';
    else if (text[i] == 'n')
      value += '\n';
    else
      return std::nullopt;
  }
  return value;
}

std::vector<FingerprintField> fingerprint_fields(const FingerprintInputs& inputs) {
  // Append new facts at the end; renaming one changes every stamp and clears caches once.
  std::vector<FingerprintField> fields{
      {"toolkit_path", inputs.toolkit_path},     {"toolkit_version", inputs.toolkit_version},
      {"driver_version", inputs.driver_version}, {"gpu_archs", join_sorted(inputs.gpu_archs)},
      {"torch_version", inputs.torch_version},   {"flashinfer_version", inputs.flashinfer_version},
      {"triton_version", inputs.triton_version}, {"engine", inputs.engine},
      {"engine_version", inputs.engine_version}, {"arch_list", inputs.arch_list},
  };
  // Only an image's: a venv engine's stamps stay what they were before the field existed.
  if (!inputs.image_digest.empty()) fields.push_back({"image_digest", inputs.image_digest});
  return fields;
}

std::string canonical_text(const std::vector<FingerprintField>& fields) {
  std::string text;
  for (const auto& field : fields) text += field.name + "=" + escape_value(field.value) + "\n";
  return text;
}

std::uint64_t fingerprint_hash(const FingerprintInputs& inputs) {
  return fingerprint_hash(fingerprint_fields(inputs));
}

std::uint64_t fingerprint_hash(const std::vector<FingerprintField>& fields) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis and prime
  for (unsigned char c : canonical_text(fields)) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string fingerprint_hex(std::uint64_t hash) {
  return fmt::format("{:016x}", hash);
}

std::string describe_changes(const std::vector<FingerprintField>& before,
                             const std::vector<FingerprintField>& after,
                             std::span<const std::string_view> only) {
  auto shown = [](const std::string& value) { return value.empty() ? "(unknown)" : value; };
  std::string text;
  auto add = [&](const std::string& name, const std::string& from, const std::string& to) {
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) return;
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {} -> {}", name, shown(from), shown(to));
  };
  for (const auto& field : after) {
    auto old = std::find_if(before.begin(), before.end(),
                            [&](const auto& other) { return other.name == field.name; });
    if (old == before.end())
      add(field.name, "", field.value);
    else if (old->value != field.value)
      add(field.name, old->value, field.value);
  }
  for (const auto& field : before)
    if (std::none_of(after.begin(), after.end(),
                     [&](const auto& other) { return other.name == field.name; }))
      add(field.name, field.value, "");
  return text;
}

}  // namespace gl
