// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether the ranks of a group start from the same caches. A JIT or autotune cache that hits on
// one rank and misses on another desynchronises the ranks until a collective times out (issue
// 18; vLLM #57423, #54618, #52291), so before a group starts each cache must be the same on every
// rank (same facts, same content) or be cleared on all of them. Pure: the reports come from
// `cache PROFILE --json` on each rank (caches/cache_digest).

#include <string>
#include <vector>

#include "caches/cache_digest.hpp"
#include "util/error.hpp"

namespace gl {

struct RankCaches {
  long long rank = 0;
  std::vector<CacheDigest> caches;
};

struct CacheVerdict {
  std::string name;
  bool clear = false;  // differs between ranks: clear it on every rank
  bool empty = false;  // no rank has a file in it
  // Why, or what agreed: "rank 1 differs (digest 1a2b3c4d5e6f, rank 0 9f8e7d6c5b4a)",
  // "same on all 2 ranks (digest 1a2b3c4d5e6f, 3 files)", "empty on all 2 ranks".
  std::string why;
};

// One verdict per cache, in rank 0's order (then caches only other ranks list). A cache is
// cleared when its fingerprint, its content digest or whether it holds files at all differs
// between ranks, or when a rank's is too large to digest (equality cannot be shown). Caches
// empty on every rank agree whatever their fingerprints. A foreign cache (not gpulaunch's to
// read or clear) on any rank is an error naming the rank: it cannot be made to agree.
Result<std::vector<CacheVerdict>> compare_rank_caches(const std::vector<RankCaches>& ranks);

// The first 12 hex digits: enough to tell digests apart in a line.
std::string short_digest(const std::string& digest);

}  // namespace gl
