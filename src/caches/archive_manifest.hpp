// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a cache archive (`gpulaunch cache export`) says about each cache it holds: the facts its
// entries were built for, their fingerprint, and the content digest (caches/cache_digest) of its
// files. The archive's first member; `cache import` reads it before anything is written, and
// refuses a cache whose facts are not this node's, naming the facts that differ.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caches/fingerprint.hpp"
#include "util/error.hpp"

namespace gl {

// 2: each cache's file list (its digest's records) follows the manifest.
inline constexpr int kCacheArchiveFormat = 2;
// The manifest member, first in the archive; then each cache's file list as
// kRecordsDirectory/NAME, in the manifest's order; then each cache's files under
// kArchivedCachesDirectory/NAME/, in its list's order.
inline constexpr std::string_view kManifestMember = "gpulaunch-cache-archive.json";
inline constexpr std::string_view kRecordsDirectory = "gpulaunch-cache-records";
inline constexpr std::string_view kArchivedCachesDirectory = "caches";
inline constexpr std::size_t kMaxManifestBytes = 1 << 20;
inline constexpr std::size_t kMaxArchivedCaches = 64;
// The file lists of all caches together: what import holds in memory before it creates anything.
inline constexpr std::size_t kMaxRecordsBytes = 64 << 20;

struct ArchivedCache {
  std::string name;
  std::string fingerprint;              // fingerprint_hex of `facts`
  std::vector<FingerprintField> facts;  // cache_fingerprint_fields on the exporting node
  std::string digest;                   // TreeDigest::sha256 of its files
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
};

struct ArchiveManifest {
  std::string profile;  // the profile it was exported from: informational
  std::vector<ArchivedCache> caches;
};

// JSON, 2-space indent, trailing newline.
std::string manifest_text(const ArchiveManifest& manifest);

// Strict: the format number, at most kMaxArchivedCaches caches with distinct names of the
// catalog's spelling, each fingerprint the hash of its facts (so a fact cannot be edited without
// the fingerprint saying so), a 64-hex digest. `shown` names the archive in errors.
Result<ArchiveManifest> parse_manifest(std::string_view text, const std::string& shown);

// Why `path` (a file's path inside its cache, as archived) cannot be one: "" or absolute, a
// "", "." or ".." component, a component of `.trash-*` (gpulaunch's leftovers, which digests
// skip and starts sweep), over 4096 bytes, a component over 255, or deeper than 128. nullopt
// when it can.
std::optional<std::string> archived_path_problem(std::string_view path);

// One file of a cache as its content digest (TreeDigest) records it: "PATH\0SIZE\0CONTENT\n".
struct FileRecord {
  std::string path;  // inside the cache
  std::uint64_t size = 0;
  std::string content;  // sha256_stored_hex
};

// A cache's file list, strictly: each path one archived_path_problem admits, in strictly
// increasing order (as the digest sorts them), each size in decimal as written, each content 64
// lowercase hex digits. Its SHA-256 is the cache's digest, so a list that passes the manifest's
// digest is the one the exporting node digested. `what` names it in errors.
Result<std::vector<FileRecord>> parse_records(std::string_view text, const std::string& what);

// "torch_version 2.9.1+cu130 here, 2.9.0+cu128 in the archive": the facts whose values differ
// (a fact only one side has counts as "(unknown)" on the other). "" when none does.
std::string describe_fact_differences(const std::vector<FingerprintField>& here,
                                      const std::vector<FingerprintField>& archived);

}  // namespace gl
