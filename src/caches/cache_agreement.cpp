// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_agreement.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace gl {
namespace {

const CacheDigest* find_cache(const RankCaches& rank, const std::string& name) {
  for (const auto& cache : rank.caches)
    if (cache.name == name) return &cache;
  return nullptr;
}

std::string digest_text(const CacheDigest& cache) {
  if (cache.digest.over_limit) return "too large to digest";
  return fmt::format("digest {}, {} file(s)", short_digest(cache.digest.sha256),
                     cache.digest.files);
}

// Why `other` (of rank `rank`) differs from `base` (rank 0's), or "" when it does not.
std::string difference(const CacheDigest& base, const CacheDigest& other, long long rank) {
  if (other.fingerprint != base.fingerprint)
    return fmt::format("rank {} differs (fingerprint {}, rank 0 {})", rank, other.fingerprint,
                       base.fingerprint);
  if (base.digest.over_limit || other.digest.over_limit)
    return fmt::format("rank {} cannot be compared ({}, rank 0 {})", rank, digest_text(other),
                       digest_text(base));
  if ((base.digest.files == 0) != (other.digest.files == 0))
    return base.digest.files == 0
               ? fmt::format("rank {} has files, rank 0 none ({})", rank, digest_text(other))
               : fmt::format("rank {} has none, rank 0 has files ({})", rank, digest_text(base));
  if (other.digest.sha256 != base.digest.sha256)
    return fmt::format("rank {} differs ({}, rank 0 {})", rank, digest_text(other),
                       digest_text(base));
  return {};
}

// The rank whose copy of `name` seeds the others, or none (said why in `verdict`): see
// compare_rank_caches.
std::optional<size_t> seed_source(const std::vector<RankCaches>& ranks, const std::string& name) {
  const CacheDigest* first = find_cache(ranks.front(), name);
  if (!first) return std::nullopt;
  for (const auto& rank : ranks) {
    const CacheDigest* cache = find_cache(rank, name);
    if (!cache || cache->fingerprint != first->fingerprint) return std::nullopt;
  }
  std::optional<size_t> best;
  size_t best_holders = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const CacheDigest* cache = find_cache(ranks[i], name);
    if (cache->digest.over_limit || cache->digest.files == 0) continue;
    const size_t holders =
        static_cast<size_t>(std::count_if(ranks.begin(), ranks.end(), [&](const RankCaches& r) {
          const CacheDigest* other = find_cache(r, name);
          return !other->digest.over_limit && other->digest.sha256 == cache->digest.sha256;
        }));
    const CacheDigest* current = best ? find_cache(ranks[*best], name) : nullptr;
    if (!best || holders > best_holders ||
        (holders == best_holders && cache->digest.files > current->digest.files)) {
      best = i;
      best_holders = holders;
    }
  }
  return best;
}

}  // namespace

std::string short_digest(const std::string& digest) {
  return digest.substr(0, 12);
}

Result<std::vector<CacheVerdict>> compare_rank_caches(const std::vector<RankCaches>& ranks) {
  std::vector<std::string> names;
  for (const auto& rank : ranks)
    for (const auto& cache : rank.caches) {
      if (cache.foreign)
        return failf(
            "rank {}: cache '{}' at '{}' was not created by gpulaunch and is outside the cache "
            "root: it can be neither read nor cleared",
            rank.rank, cache.name, cache.path);
      if (std::find(names.begin(), names.end(), cache.name) == names.end())
        names.push_back(cache.name);
    }
  std::vector<CacheVerdict> verdicts;
  if (ranks.empty()) return verdicts;
  const RankCaches& first = ranks.front();
  for (const auto& name : names) {
    CacheVerdict verdict;
    verdict.name = name;
    const CacheDigest* base = find_cache(first, name);
    bool any_files = false;
    for (const auto& rank : ranks)
      if (const auto* cache = find_cache(rank, name);
          cache && (cache->digest.files > 0 || cache->digest.over_limit))
        any_files = true;
    if (!any_files) {
      verdict.empty = true;
      verdict.why = fmt::format("empty on all {} ranks", ranks.size());
      verdicts.push_back(std::move(verdict));
      continue;
    }
    std::vector<std::string> reasons;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (&ranks[i] == &first) continue;
      const CacheDigest* cache = find_cache(ranks[i], name);
      if (!base || !cache) {
        reasons.push_back(
            fmt::format("rank {} does not have it", base ? ranks[i].rank : first.rank));
        continue;
      }
      if (auto why = difference(*base, *cache, ranks[i].rank); !why.empty())
        reasons.push_back(std::move(why));
    }
    if (reasons.empty() && base && base->digest.over_limit)
      reasons.push_back(
          fmt::format("rank {} cannot be compared ({})", first.rank, digest_text(*base)));
    if (reasons.empty()) {
      verdict.why = fmt::format("same on all {} ranks ({})", ranks.size(), digest_text(*base));
    } else {
      for (const auto& reason : reasons) verdict.why += (verdict.why.empty() ? "" : "; ") + reason;
      if (const auto source = seed_source(ranks, name)) {
        const CacheDigest& seed = *find_cache(ranks[*source], name);
        verdict.seed_from = ranks[*source].rank;
        for (const auto& rank : ranks) {
          const CacheDigest* cache = find_cache(rank, name);
          if (cache->digest.over_limit || cache->digest.sha256 != seed.digest.sha256)
            verdict.seed_to.push_back(rank.rank);
        }
      } else {
        verdict.clear = true;
      }
    }
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

}  // namespace gl
