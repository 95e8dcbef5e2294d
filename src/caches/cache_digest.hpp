// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a cache holds, as one value two nodes can compare: a content digest of its files, and the
// fingerprint of the facts its entries depend on. `lock` records both; `up --all-nodes` compares
// them between ranks (caches/cache_agreement). Read as root from a tree the engine writes: every
// file through ConfinedRoot (no link followed, no other mount entered, regular files only).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "caches/fingerprint.hpp"
#include "caches/safe_remove.hpp"
#include "catalog/jit_caches.hpp"
#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace gl {

// How much of a cache is read for its digest. Past either bound the digest is not taken
// (over_limit): two caches that cannot be read whole cannot be shown to be equal. max_bytes
// counts stored bytes (st_blocks), so sparse holes neither count nor get read. One file is
// open at a time.
struct DigestLimits {
  std::uint64_t max_files = 200'000;
  std::uint64_t max_bytes = 64ULL << 30;
};

struct TreeDigest {
  // SHA-256 (hex) over one "PATH\0SIZE\0CONTENT\n" record per regular file (CONTENT:
  // sha256_stored_hex, which skips holes and zero blocks), PATH
  // relative to the cache directory, records sorted by PATH. Symlinks, devices, sockets, other
  // mounts and `.trash-*` leftovers are not part of it (and no link is followed). An empty or
  // missing directory digests as no records at all. "" when over_limit.
  std::string sha256;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  bool over_limit = false;
};

// The digest of the directory at `relative` below `root` ("" for the root itself). `records`, when
// given, receives the records the digest is the SHA-256 of (an archive's file list).
Result<TreeDigest> digest_tree(const ConfinedRoot& root, std::string_view relative,
                               const DigestLimits& limits = {}, std::string* records = nullptr);

// The facts `entry`'s entries depend on: its catalog row's stale_on, or every fact when the row
// names none (or there is no row); in fingerprint_fields' order.
std::vector<FingerprintField> cache_fingerprint_fields(const JitCache* entry,
                                                       const FingerprintInputs& inputs);
// Their fingerprint (fingerprint_hex).
std::string cache_fingerprint(const JitCache* entry, const FingerprintInputs& inputs);

struct CacheDigest {
  std::string name;
  std::string path;
  std::string fingerprint;
  bool foreign = false;  // outside the cache root and not created by gpulaunch: not read
  TreeDigest digest;
};

// Every cache of `plan`, in its order. `records` as inspect_caches takes it. Creates nothing.
Result<std::vector<CacheDigest>> cache_digests(const LaunchPlan& plan,
                                               const FingerprintInputs& inputs,
                                               const std::filesystem::path& records,
                                               const DigestLimits& limits = {});

// {"NAME": {"path", "fingerprint", "digest", "files", "bytes"}, ...}: the lock's "caches"
// section and what `cache PROFILE --json` prints under "caches". digest is null when over the
// limit, "foreign" true for a cache that was not read.
nlohmann::ordered_json cache_digests_json(const std::vector<CacheDigest>& caches);
// The reverse, for a report another node printed; refuses anything not in that shape.
Result<std::vector<CacheDigest>> parse_cache_digests(const nlohmann::ordered_json& json);

}  // namespace gl
