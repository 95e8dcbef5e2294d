// SPDX-License-Identifier: Apache-2.0
#include "caches/archive_manifest.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "caches/safe_remove.hpp"
#include "util/json_file.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

using Json = nlohmann::ordered_json;

bool hex_of_length(const std::string& text, std::size_t length) {
  return text.size() == length && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// As the catalog spells cache names ("torch-extensions") and fingerprint fields ("gpu_archs").
bool plain_name(const std::string& name, bool allow_dash) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (allow_dash && c == '-');
  });
}

const std::string* value_of(const std::vector<FingerprintField>& fields, const std::string& name) {
  auto found = std::find_if(fields.begin(), fields.end(),
                            [&](const FingerprintField& field) { return field.name == name; });
  return found == fields.end() ? nullptr : &found->value;
}

}  // namespace

std::string manifest_text(const ArchiveManifest& manifest) {
  Json json;
  json["gpulaunch_cache_archive"] = kCacheArchiveFormat;
  json["profile"] = manifest.profile;
  json["caches"] = Json::array();
  for (const auto& cache : manifest.caches) {
    Json facts = Json::object();
    for (const auto& field : cache.facts) facts[field.name] = field.value;
    json["caches"].push_back({{"name", cache.name},
                              {"fingerprint", cache.fingerprint},
                              {"facts", facts},
                              {"digest", cache.digest},
                              {"files", cache.files},
                              {"bytes", cache.bytes}});
  }
  return json.dump(2) + "\n";
}

Result<ArchiveManifest> parse_manifest(std::string_view text, const std::string& shown) {
  const std::string what = fmt::format("the manifest of '{}'", shown);
  if (text.size() > kMaxManifestBytes)
    return failf("Failed to read {}: over {} bytes", what, kMaxManifestBytes);
  GL_TRY(const Json json, parse_bounded_json<Json>(text, what));
  const auto bad = [&](std::string_view why) { return failf("Failed to read {}: {}", what, why); };
  if (!json.is_object() || !json.contains("gpulaunch_cache_archive"))
    return bad("not a gpulaunch cache archive");
  if (json["gpulaunch_cache_archive"] != kCacheArchiveFormat)
    return bad(fmt::format("format {} is not the {} this gpulaunch reads",
                           json["gpulaunch_cache_archive"].dump(), kCacheArchiveFormat));
  ArchiveManifest manifest;
  if (!json.contains("profile") || !json["profile"].is_string())
    return bad("\"profile\" is not a string");
  manifest.profile = json["profile"].get<std::string>();
  if (!json.contains("caches") || !json["caches"].is_array())
    return bad("\"caches\" is not a list");
  if (json["caches"].size() > kMaxArchivedCaches)
    return bad(fmt::format("more than {} caches", kMaxArchivedCaches));
  std::set<std::string> names;
  for (const auto& entry : json["caches"]) {
    if (!entry.is_object()) return bad("a cache is not an object");
    const auto text_of = [&](const char* key) -> std::optional<std::string> {
      if (!entry.contains(key) || !entry[key].is_string()) return std::nullopt;
      return entry[key].get<std::string>();
    };
    ArchivedCache cache;
    const auto name = text_of("name");
    if (!name || !plain_name(*name, true)) return bad("a cache's \"name\" is not a cache name");
    cache.name = *name;
    if (!names.insert(cache.name).second)
      return bad(fmt::format("cache '{}' is listed twice", cache.name));
    const auto fingerprint = text_of("fingerprint");
    const auto digest = text_of("digest");
    if (!fingerprint || !hex_of_length(*fingerprint, 16))
      return bad(fmt::format("cache '{}' has no fingerprint", cache.name));
    if (!digest || !hex_of_length(*digest, 64))
      return bad(fmt::format("cache '{}' has no content digest", cache.name));
    cache.fingerprint = *fingerprint;
    cache.digest = *digest;
    for (const char* key : {"files", "bytes"})
      if (!entry.contains(key) || !entry[key].is_number_unsigned())
        return bad(fmt::format("cache '{}': \"{}\" is not a count", cache.name, key));
    cache.files = entry["files"].get<std::uint64_t>();
    cache.bytes = entry["bytes"].get<std::uint64_t>();
    if (!entry.contains("facts") || !entry["facts"].is_object())
      return bad(fmt::format("cache '{}' has no facts", cache.name));
    for (const auto& [field, value] : entry["facts"].items()) {
      if (!plain_name(field, false) || !value.is_string())
        return bad(fmt::format("cache '{}': fact '{}' is not a fact", cache.name, field));
      cache.facts.push_back({field, value.get<std::string>()});
    }
    // The facts are what the import judges: they must be those the fingerprint was taken of.
    if (fingerprint_hex(fingerprint_hash(cache.facts)) != cache.fingerprint)
      return bad(fmt::format("cache '{}': its facts do not hash to its fingerprint {}", cache.name,
                             cache.fingerprint));
    manifest.caches.push_back(std::move(cache));
  }
  return manifest;
}

std::optional<std::string> archived_path_problem(std::string_view path) {
  if (path.empty()) return "an empty name";
  if (path.front() == '/') return "an absolute path";
  if (path.size() > 4096) return "a name over 4096 bytes";
  std::size_t depth = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = path.find('/', start);
    const std::string_view part = path.substr(start, slash - start);
    if (part.empty() || part == ".") return "an empty or '.' component";
    if (part == "..") return "a '..' component";
    if (part.starts_with(kTrashPrefix))
      return fmt::format("a '{}*' component (gpulaunch's own leftovers)", kTrashPrefix);
    if (part.size() > 255) return "a component over 255 bytes";
    if (++depth > 128) return "deeper than 128 directories";
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return std::nullopt;
}

Result<std::vector<FileRecord>> parse_records(std::string_view text, const std::string& what) {
  std::vector<FileRecord> records;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto bad = [&](std::string_view why) {
      return failf("Failed to read {}: record {}: {}", what, records.size() + 1, why);
    };
    const std::size_t path_end = text.find('\0', at);
    if (path_end == std::string_view::npos) return bad("no size");
    FileRecord record;
    record.path = std::string(text.substr(at, path_end - at));
    if (auto problem = archived_path_problem(record.path))
      return bad(fmt::format("'{}' has {}", record.path, *problem));
    if (!records.empty() && !(records.back().path < record.path))
      return bad(fmt::format("'{}' is not after '{}'", record.path, records.back().path));
    const std::size_t size_end = text.find('\0', path_end + 1);
    if (size_end == std::string_view::npos) return bad("no content digest");
    const std::string_view size = text.substr(path_end + 1, size_end - path_end - 1);
    if (size.empty() || size.size() > 19 || (size.size() > 1 && size[0] == '0') ||
        !std::all_of(size.begin(), size.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return bad("the size is not a count");
    record.size = std::stoull(std::string(size));
    if (size_end + 1 + 64 + 1 > text.size()) return bad("the content digest is cut short");
    record.content = std::string(text.substr(size_end + 1, 64));
    if (!hex_of_length(record.content, 64) || text[size_end + 65] != '\n')
      return bad("the content digest is not 64 hex digits and a newline");
    at = size_end + 66;
    records.push_back(std::move(record));
  }
  return records;
}

std::string describe_fact_differences(const std::vector<FingerprintField>& here,
                                      const std::vector<FingerprintField>& archived) {
  const auto shown = [](const std::string* value) {
    return !value || value->empty() ? std::string("(unknown)") : *value;
  };
  std::string text;
  const auto add = [&](const std::string& name) {
    const std::string* ours = value_of(here, name);
    const std::string* theirs = value_of(archived, name);
    if (ours && theirs && *ours == *theirs) return;
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {} here, {} in the archive", name, shown(ours), shown(theirs));
  };
  for (const auto& field : here) add(field.name);
  for (const auto& field : archived)
    if (!value_of(here, field.name)) add(field.name);
  return text;
}

}  // namespace gl
