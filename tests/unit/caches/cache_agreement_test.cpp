// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_agreement.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

CacheDigest cache(std::string name, std::string digest, std::uint64_t files,
                  std::string fingerprint = "00000000000000aa") {
  CacheDigest c;
  c.name = std::move(name);
  c.path = "/var/cache/gpulaunch/mn/" + c.name;
  c.fingerprint = std::move(fingerprint);
  c.digest.sha256 = std::move(digest);
  c.digest.files = files;
  return c;
}

const std::string kEmpty(64, 'e');
const std::string kOne = "1111111111112222" + std::string(48, '1');
const std::string kTwo = "2222222222223333" + std::string(48, '2');

std::vector<CacheVerdict> compare(const std::vector<RankCaches>& ranks) {
  auto verdicts = compare_rank_caches(ranks);
  EXPECT_TRUE(verdicts) << verdicts.error().message;
  return verdicts ? *verdicts : std::vector<CacheVerdict>{};
}

TEST(CacheAgreement, AllTheSameClearsNothing) {
  const std::vector<RankCaches> ranks{
      {0, {cache("flashinfer", kOne, 3), cache("triton", kEmpty, 0)}},
      {1, {cache("flashinfer", kOne, 3), cache("triton", kEmpty, 0)}},
      {2, {cache("flashinfer", kOne, 3), cache("triton", kEmpty, 0)}}};
  const auto verdicts = compare(ranks);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_FALSE(verdicts[0].clear);
  EXPECT_EQ(verdicts[0].why, "same on all 3 ranks (digest 111111111111, 3 file(s))");
  EXPECT_FALSE(verdicts[0].empty);
  EXPECT_FALSE(verdicts[1].clear);
  EXPECT_TRUE(verdicts[1].empty);
  EXPECT_EQ(verdicts[1].why, "empty on all 3 ranks");
}

// Same facts, other content: the copy with more compiled entries seeds the other rank, the
// cache that agrees is left alone.
TEST(CacheAgreement, OneRanksOtherContentSeedsThatCacheOnlyFromTheFullerCopy) {
  const std::vector<RankCaches> ranks{
      {0, {cache("flashinfer", kOne, 3), cache("triton", kOne, 3)}},
      {1, {cache("flashinfer", kTwo, 4), cache("triton", kOne, 3)}}};
  const auto verdicts = compare(ranks);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_FALSE(verdicts[0].clear);
  EXPECT_EQ(verdicts[0].seed_from, 1);
  EXPECT_EQ(verdicts[0].seed_to, std::vector<long long>{0});
  EXPECT_EQ(verdicts[0].why,
            "rank 1 differs (digest 222222222222, 4 file(s), rank 0 digest 111111111111, 3 "
            "file(s))");
  EXPECT_FALSE(verdicts[1].clear);
  EXPECT_FALSE(verdicts[1].seed_from);
}

// A new node (empty caches) is seeded from the one that compiled, whichever rank it is.
TEST(CacheAgreement, FilesOnSomeRanksOnlySeedTheOthers) {
  auto verdicts = compare({{0, {cache("sglang", kEmpty, 0)}}, {1, {cache("sglang", kOne, 1)}}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].clear);
  EXPECT_EQ(verdicts[0].seed_from, 1);
  EXPECT_EQ(verdicts[0].seed_to, std::vector<long long>{0});
  EXPECT_EQ(verdicts[0].why, "rank 1 has files, rank 0 none (digest 111111111111, 1 file(s))");
  verdicts = compare({{0, {cache("sglang", kOne, 1)}}, {1, {cache("sglang", kEmpty, 0)}}});
  EXPECT_EQ(verdicts[0].seed_from, 0);
  EXPECT_EQ(verdicts[0].seed_to, std::vector<long long>{1});
  EXPECT_EQ(verdicts[0].why, "rank 1 has none, rank 0 has files (digest 111111111111, 1 file(s))");
}

// The content most ranks hold wins over a fuller copy, so fewest ranks import; only those that
// differ from it are seeded.
TEST(CacheAgreement, TheContentMostRanksHoldSeedsOnlyTheRanksThatDiffer) {
  const auto verdicts = compare({{0, {cache("vllm", kEmpty, 0)}},
                                 {1, {cache("vllm", kTwo, 9)}},
                                 {2, {cache("vllm", kOne, 2)}},
                                 {3, {cache("vllm", kOne, 2)}}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].clear);
  EXPECT_EQ(verdicts[0].seed_from, 2);
  EXPECT_EQ(verdicts[0].seed_to, (std::vector<long long>{0, 1}));
}

TEST(CacheAgreement, AnotherFingerprintClearsEvenWithTheSameContent) {
  const auto verdicts = compare({{0, {cache("flashinfer", kOne, 3, "00000000000000aa")}},
                                 {1, {cache("flashinfer", kOne, 3, "00000000000000bb")}}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_TRUE(verdicts[0].clear);  // no rank's was compiled for facts every rank has
  EXPECT_FALSE(verdicts[0].seed_from);
  EXPECT_EQ(verdicts[0].why,
            "rank 1 differs (fingerprint 00000000000000bb, rank 0 00000000000000aa)");
  // ... but an empty cache is empty under any facts: nothing to clear.
  EXPECT_FALSE(compare({{0, {cache("flashinfer", kEmpty, 0, "a")}},
                        {1, {cache("flashinfer", kEmpty, 0, "b")}}})[0]
                   .clear);
}

TEST(CacheAgreement, ATreeTooLargeToDigestCannotBeShownEqual) {
  auto big = cache("inductor", "", 300000);
  big.digest.over_limit = true;
  const auto verdicts = compare({{0, {big}}, {1, {big}}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_TRUE(verdicts[0].clear);
  EXPECT_FALSE(verdicts[0].seed_from);
  // ... nor be exported: a digestible copy on another rank seeds the one too large.
  const auto seeded = compare({{0, {big}}, {1, {cache("inductor", kOne, 5)}}});
  EXPECT_FALSE(seeded[0].clear);
  EXPECT_EQ(seeded[0].seed_from, 1);
  EXPECT_EQ(seeded[0].seed_to, std::vector<long long>{0});
  EXPECT_EQ(verdicts[0].why,
            "rank 1 cannot be compared (too large to digest, rank 0 too large to digest)");
}

TEST(CacheAgreement, EveryDifferingRankIsNamedAndACacheOneRankLacksCounts) {
  const auto verdicts = compare({{0, {cache("vllm", kOne, 1)}},
                                 {1, {cache("vllm", kTwo, 1)}},
                                 {2, {}},
                                 {3, {cache("vllm", kOne, 1)}}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_TRUE(verdicts[0].clear);  // rank 2's profile has no such cache: nothing to seed into
  EXPECT_FALSE(verdicts[0].seed_from);
  EXPECT_EQ(verdicts[0].why,
            "rank 1 differs (digest 222222222222, 1 file(s), rank 0 digest 111111111111, 1 "
            "file(s)); rank 2 does not have it");
}

TEST(CacheAgreement, AForeignCacheOnAnyRankIsAnErrorNamingIt) {
  auto foreign = cache("flashinfer", "", 0);
  foreign.foreign = true;
  auto verdicts = compare_rank_caches({{0, {cache("flashinfer", kOne, 1)}}, {1, {foreign}}});
  ASSERT_FALSE(verdicts);
  EXPECT_EQ(verdicts.error().message,
            "rank 1: cache 'flashinfer' at '/var/cache/gpulaunch/mn/flashinfer' was not created "
            "by gpulaunch and is outside the cache root: it can be neither read nor cleared");
}

}  // namespace
}  // namespace gl
