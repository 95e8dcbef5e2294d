// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether the ranks of a group start from the same caches. A JIT or autotune cache that hits on
// one rank and misses on another desynchronises the ranks until a collective times out (issue
// 18; vLLM #57423, #54618, #52291), so before a group starts each cache must be the same on every
// rank (same facts, same content): seeded from a rank whose cache was compiled for the facts
// every rank shares, or, where no rank's is, cleared on all of them. Pure: the reports come from
// `cache PROFILE --json` on each rank (caches/cache_digest).

#include <optional>
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
  bool clear = false;  // differs between ranks and no rank's can seed the others: clear it on all
  bool empty = false;  // no rank has a file in it
  // Differs between ranks, and this rank's copy can seed the others: `seed_to` (in rank order)
  // import it (`cache export` there streamed into `cache import`).
  std::optional<long long> seed_from;
  std::vector<long long> seed_to;
  // Why, or what agreed: "rank 1 differs (digest 1a2b3c4d5e6f, rank 0 9f8e7d6c5b4a)",
  // "same on all 2 ranks (digest 1a2b3c4d5e6f, 3 files)", "empty on all 2 ranks".
  std::string why;
};

// One verdict per cache, in rank 0's order (then caches only other ranks list). A cache differs
// when its fingerprint, its content digest or whether it holds files at all differs between
// ranks, or when a rank's is too large to digest (equality cannot be shown). A cache that
// differs is seeded where every rank has it under one fingerprint (the facts its entries depend
// on are the same everywhere, so `cache import` takes it on each) and some rank holds files
// that could be digested: the source is the content most ranks already hold, then the one with
// the most files (a JIT cache grows), then the lowest rank; every rank whose content differs
// from it is seeded. Otherwise (fingerprints differ, a rank lacks the cache, or no rank's can be
// digested) it is cleared on every rank. Caches empty on every rank agree whatever their
// fingerprints. A foreign cache (not gpulaunch's to
// read or clear) on any rank is an error naming the rank: it cannot be made to agree.
Result<std::vector<CacheVerdict>> compare_rank_caches(const std::vector<RankCaches>& ranks);

// The first 12 hex digits: enough to tell digests apart in a line.
std::string short_digest(const std::string& digest);

}  // namespace gl
