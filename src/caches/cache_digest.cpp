// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_digest.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/core.h>

#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "util/sha256.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

std::string below(std::string_view relative, const std::string& path) {
  if (relative.empty()) return path;
  return path.substr(std::min(path.size(), relative.size() + 1));
}

}  // namespace

Result<TreeDigest> digest_tree(const ConfinedRoot& root, std::string_view relative,
                               const DigestLimits& limits, std::string* records_out) {
  TreeDigest digest;
  std::vector<std::string> paths;
  // The walk visits every file (depth-bounded); only max_files + 1 names are kept.
  GL_TRY_VOID(root.for_each_file(relative, [&](const std::string& path) {
    if (paths.size() <= limits.max_files) paths.push_back(path);
  }));
  if (paths.size() > limits.max_files) {
    digest.over_limit = true;
    digest.files = paths.size();
    return digest;
  }
  std::sort(paths.begin(), paths.end());
  std::string records;
  std::uint64_t stored = 0;
  for (const auto& path : paths) {
    auto file = root.open_file(path);
    if (!file) {
      // Gone since the walk (the engine's own cleanup): not part of the cache any more.
      auto there = root.exists(path);
      if (there && !*there) continue;
      return std::unexpected(file.error());
    }
    struct stat info {};
    if (::fstat(file->get(), &info) != 0)
      return failf("Failed to stat '{}': {}", root.shown(path), std::strerror(errno));
    const auto size = static_cast<std::uint64_t>(info.st_size);
    // Bounded by what is stored, not the apparent size: holes are never read.
    const auto allocated = std::min(size, static_cast<std::uint64_t>(info.st_blocks) * 512);
    if (stored + allocated > limits.max_bytes) {
      digest.over_limit = true;
      digest.files = paths.size();
      digest.bytes += size;
      return digest;
    }
    GL_TRY(auto content, sha256_stored_hex(file->get(), size, root.shown(path)));
    stored += content.read;
    records += below(relative, path);
    records += '\0';
    records += std::to_string(size);
    records += '\0';
    records += content.sha256;
    records += '\n';
    ++digest.files;
    digest.bytes += size;
  }
  digest.sha256 = sha256_hex(records);
  if (records_out) *records_out = std::move(records);
  return digest;
}

std::vector<FingerprintField> cache_fingerprint_fields(const JitCache* entry,
                                                       const FingerprintInputs& inputs) {
  auto fields = fingerprint_fields(inputs);
  if (entry && !entry->stale_on.empty())
    std::erase_if(fields, [&](const FingerprintField& field) {
      return std::find(entry->stale_on.begin(), entry->stale_on.end(), field.name) ==
             entry->stale_on.end();
    });
  return fields;
}

std::string cache_fingerprint(const JitCache* entry, const FingerprintInputs& inputs) {
  return fingerprint_hex(fingerprint_hash(cache_fingerprint_fields(entry, inputs)));
}

Result<std::vector<CacheDigest>> cache_digests(const LaunchPlan& plan,
                                               const FingerprintInputs& inputs,
                                               const std::filesystem::path& records_directory,
                                               const DigestLimits& limits) {
  GL_TRY(auto targets, cache_targets(plan));
  GL_TRY(auto records, CacheRecords::open_existing(records_directory));
  const std::string cache_root = std::filesystem::path(plan.cache_root).lexically_normal().string();
  GL_TRY(auto root, open_if_present(plan.cache_root));
  std::vector<CacheDigest> digests;
  for (const auto& target : targets) {
    CacheDigest cache{target.location.name,
                      target.location.directory,
                      cache_fingerprint(target.entry, inputs),
                      false,
                      {}};
    std::optional<ConfinedRoot> own;
    if (target.own_root) {
      GL_TRY(own, open_own_root(target));
      if (own && !(records && check_created(*records, target, *own, cache_root))) {
        cache.foreign = true;
        digests.push_back(std::move(cache));
        continue;
      }
    }
    const ConfinedRoot* confined =
        target.own_root ? (own ? &*own : nullptr) : (root ? &*root : nullptr);
    if (confined) {
      GL_TRY(cache.digest, digest_tree(*confined, target.relative, limits));
    } else {
      cache.digest.sha256 = sha256_hex("");
    }
    digests.push_back(std::move(cache));
  }
  return digests;
}

nlohmann::ordered_json cache_digests_json(const std::vector<CacheDigest>& caches) {
  auto json = nlohmann::ordered_json::object();
  for (const auto& cache : caches) {
    auto& entry = json[cache.name];
    entry["path"] = cache.path;
    entry["fingerprint"] = cache.fingerprint;
    if (cache.foreign) {
      entry["foreign"] = true;
      continue;
    }
    if (cache.digest.over_limit)
      entry["digest"] = nullptr;
    else
      entry["digest"] = cache.digest.sha256;
    entry["files"] = cache.digest.files;
    entry["bytes"] = cache.digest.bytes;
  }
  return json;
}

Result<std::vector<CacheDigest>> parse_cache_digests(const nlohmann::ordered_json& json) {
  if (!json.is_object()) return failf("Failed to read cache digests: not a JSON object");
  std::vector<CacheDigest> caches;
  for (const auto& [name, entry] : json.items()) {
    auto bad = [&name = name] {
      return failf("Failed to read cache digests: '{}' is not a cache digest", name);
    };
    if (!entry.is_object() || !entry.contains("path") || !entry["path"].is_string() ||
        !entry.contains("fingerprint") || !entry["fingerprint"].is_string())
      return bad();
    CacheDigest cache{
        name, entry["path"].get<std::string>(), entry["fingerprint"].get<std::string>(), false, {}};
    if (entry.value("foreign", false) == true) {
      cache.foreign = true;
      caches.push_back(std::move(cache));
      continue;
    }
    const auto digest = entry.find("digest");
    const auto files = entry.find("files");
    const auto bytes = entry.find("bytes");
    if (digest == entry.end() || !(digest->is_string() || digest->is_null()) ||
        files == entry.end() || !files->is_number_unsigned() || bytes == entry.end() ||
        !bytes->is_number_unsigned())
      return bad();
    cache.digest.over_limit = digest->is_null();
    if (!cache.digest.over_limit) cache.digest.sha256 = digest->get<std::string>();
    cache.digest.files = files->get<std::uint64_t>();
    cache.digest.bytes = bytes->get<std::uint64_t>();
    caches.push_back(std::move(cache));
  }
  return caches;
}

}  // namespace gl
