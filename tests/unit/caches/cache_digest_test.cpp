// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_digest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include "temp_tree.hpp"
#include "util/sha256.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using CacheDigestTest = test::TempTree;

TreeDigest digest_of(const fs::path& root, std::string_view relative = "",
                     const DigestLimits& limits = {}) {
  auto opened = ConfinedRoot::open(root);
  EXPECT_TRUE(opened) << opened.error().message;
  auto digest = digest_tree(*opened, relative, limits);
  EXPECT_TRUE(digest) << digest.error().message;
  return *digest;
}

// sha256_stored_hex of content shorter than one block: offset 0 as 8 bytes, then the bytes.
std::string small_content(const std::string& content) {
  return sha256_hex(std::string(8, '\0') + content);
}

void sparse(const fs::path& path, std::uint64_t size, std::uint64_t at, const std::string& data) {
  std::filesystem::create_directories(path.parent_path());
  { std::ofstream touch(path); }
  std::filesystem::resize_file(path, size);
  std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
  out.seekp(static_cast<std::streamoff>(at));
  out << data;
}

TEST_F(CacheDigestTest, EqualTreesDigestEqualWhereverTheyLie) {
  write(base / "a/flashinfer/x/1.so", "kernel one");
  write(base / "a/flashinfer/2.json", "{}");
  write(base / "b/flashinfer/2.json", "{}");
  write(base / "b/flashinfer/x/1.so", "kernel one");
  const auto a = digest_of(base / "a", "flashinfer");
  const auto b = digest_of(base / "b/flashinfer");
  EXPECT_EQ(a.sha256, b.sha256);
  EXPECT_EQ(a.files, 2u);
  EXPECT_EQ(a.bytes, 12u);
  // The documented record format, so another implementation can check it.
  EXPECT_EQ(a.sha256, sha256_hex(std::string("2.json\0"
                                             "2\0",
                                             9) +
                                 small_content("{}") + "\n" +
                                 std::string("x/1.so\0"
                                             "10\0",
                                             10) +
                                 small_content("kernel one") + "\n"));
}

TEST_F(CacheDigestTest, ContentNameAndExtraFilesEachChangeIt) {
  write(base / "c/k.so", "aaaa");
  const auto before = digest_of(base / "c");
  write(base / "c/k.so", "aaab");  // same size, other content
  const auto content = digest_of(base / "c");
  EXPECT_NE(content.sha256, before.sha256);
  fs::rename(base / "c/k.so", base / "c/l.so");
  EXPECT_NE(digest_of(base / "c").sha256, content.sha256);
  write(base / "c/empty");
  EXPECT_EQ(digest_of(base / "c").files, 2u);
}

TEST_F(CacheDigestTest, LinksAreNotFollowedNorCounted) {
  write(base / "outside/secret", "not the cache's");
  write(base / "c/k.so", "k");
  const auto plain = digest_of(base / "c");
  fs::create_symlink(base / "outside/secret", base / "c/link");
  fs::create_directory_symlink(base / "outside", base / "c/dirlink");
  const auto linked = digest_of(base / "c");
  EXPECT_EQ(linked.sha256, plain.sha256);
  EXPECT_EQ(linked.files, 1u);
  // The cache directory itself a link: refused, never read through.
  fs::create_directory_symlink(base / "outside", base / "c2");
  EXPECT_FALSE(ConfinedRoot::open(base / "c2"));
  auto root = ConfinedRoot::open(base);
  ASSERT_TRUE(root);
  const auto through = digest_tree(*root, "c2");
  ASSERT_TRUE(through);
  EXPECT_EQ(through->files, 0u);
}

TEST_F(CacheDigestTest, MissingAndEmptyDigestAlikeAndTrashIsLeftOut) {
  fs::create_directories(base / "c/empty");
  const auto empty = digest_of(base / "c", "empty");
  const auto missing = digest_of(base / "c", "missing");
  EXPECT_EQ(empty.sha256, missing.sha256);
  EXPECT_EQ(empty.sha256, sha256_hex(""));
  write(base / "c/empty/.trash-x-1/old.so", "interrupted clear");
  EXPECT_EQ(digest_of(base / "c", "empty").sha256, empty.sha256);
}

TEST_F(CacheDigestTest, PastItsLimitsATreeHasNoDigest) {
  write(base / "c/1", "12345");
  write(base / "c/2", "12345");
  auto over_files = digest_of(base / "c", "", DigestLimits{1, 1000});
  EXPECT_TRUE(over_files.over_limit);
  EXPECT_EQ(over_files.sha256, "");
  EXPECT_TRUE(digest_of(base / "c", "", DigestLimits{10, 9}).over_limit);
  EXPECT_FALSE(digest_of(base / "c", "", DigestLimits{2, 10}).over_limit);
}

TEST_F(CacheDigestTest, SparseHolesAreNeitherReadNorCountedButContentStillCounts) {
  // Two 60 GiB files that store a few bytes each: digested from their data extents under a
  // 1 MiB byte bound (reading the holes would take minutes and pass any bound).
  constexpr std::uint64_t k60GiB = 60ULL << 30;
  sparse(base / "c/a.bin", k60GiB, 30ULL << 30, "kernel");
  sparse(base / "c/b.bin", k60GiB, 7, "tail");
  const DigestLimits small{10, 1 << 20};
  const auto before = digest_of(base / "c", "", small);
  ASSERT_FALSE(before.over_limit);
  EXPECT_EQ(before.files, 2u);
  EXPECT_EQ(before.bytes, 2 * k60GiB);  // the apparent size is still what is reported
  sparse(base / "c/a.bin", k60GiB, (30ULL << 30) + 1, "X");  // one byte deep inside
  const auto changed = digest_of(base / "c", "", small);
  ASSERT_FALSE(changed.over_limit);
  EXPECT_NE(changed.sha256, before.sha256);
  // The same content written densely (zeros on disk) digests as the sparse copy does.
  sparse(base / "d/f", 3 * kStoredBlock, kStoredBlock + 5, "mid");
  std::string dense(3 * kStoredBlock, '\0');
  dense.replace(kStoredBlock + 5, 3, "mid");
  write(base / "e/f", dense);
  EXPECT_EQ(digest_of(base / "d").sha256, digest_of(base / "e").sha256);
  dense[0] = 'x';
  write(base / "e/f", dense);
  EXPECT_NE(digest_of(base / "d").sha256, digest_of(base / "e").sha256);
}

TEST_F(CacheDigestTest, TheFingerprintCountsOnlyTheFactsTheCacheDependsOn) {
  FingerprintInputs a;
  a.toolkit_version = "13.0";
  a.torch_version = "2.9";
  FingerprintInputs b = a;
  b.torch_version = "2.10";
  // TileLang's entries go stale on the toolkit only (its catalog row); FlashInfer's on any fact.
  const JitCache* tilelang = find_jit_cache("tilelang");
  const JitCache* flashinfer = find_jit_cache("flashinfer");
  ASSERT_TRUE(tilelang && flashinfer);
  EXPECT_EQ(cache_fingerprint(tilelang, a), cache_fingerprint(tilelang, b));
  EXPECT_NE(cache_fingerprint(flashinfer, a), cache_fingerprint(flashinfer, b));
}

TEST_F(CacheDigestTest, EveryCacheOfAPlanAndItsJsonRoundTrip) {
  const auto plan = plan_under(base / "root");
  write(base / "root/flashinfer/a.so", "12345");
  auto digests = cache_digests(plan, {}, base / "no-records");
  ASSERT_TRUE(digests) << digests.error().message;
  ASSERT_EQ(digests->size(), plan.caches.size());
  EXPECT_EQ(digests->front().name, "flashinfer");
  EXPECT_EQ(digests->front().digest.files, 1u);
  EXPECT_FALSE(fs::exists(base / "no-records"));  // looking creates nothing
  auto parsed = parse_cache_digests(cache_digests_json(*digests));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->size(), digests->size());
  EXPECT_EQ(parsed->front().digest.sha256, digests->front().digest.sha256);
  EXPECT_EQ(parsed->front().fingerprint, digests->front().fingerprint);
  EXPECT_FALSE(parse_cache_digests(nlohmann::ordered_json::parse(R"({"x": {"path": 1}})")));
}

// What import computes as a member streams equals what the digest reads from a file: for content
// with zero blocks and a tail, fed in odd pieces with a hole skipped; and only the blocks that
// are not all zero are handed over to be written.
TEST_F(CacheDigestTest, TheStreamedStoredDigestEqualsTheFilesAndHandsOverOnlyStoredBlocks) {
  std::string content(5 * kStoredBlock + 1000, '\0');
  for (std::size_t i = 0; i < 3000; ++i) content[kStoredBlock + i * 7] = static_cast<char>(i | 1);
  content[4 * kStoredBlock + 100] = 'z';
  content.back() = 't';
  write(base / "f", content);
  UniqueFd fd(::open((base / "f").c_str(), O_RDONLY | O_CLOEXEC));
  auto expected = sha256_stored_hex(fd.get(), content.size(), "f");
  ASSERT_TRUE(expected) << expected.error().message;

  std::vector<std::uint64_t> handed;
  std::string rebuilt(content.size(), '\0');
  StoredHasher hasher(content.size(), [&](std::uint64_t offset, std::span<const char> block) {
    handed.push_back(offset);
    std::copy(block.begin(), block.end(), rebuilt.begin() + static_cast<std::ptrdiff_t>(offset));
    return Result<void>{};
  });
  // Block 0 and 2-3 arrive as a hole (never added); the rest in 4097-byte pieces.
  for (std::uint64_t at = kStoredBlock; at < content.size(); at += 4097) {
    if (at >= 2 * kStoredBlock && at < 4 * kStoredBlock) continue;
    const auto length = std::min<std::uint64_t>(4097, content.size() - at);
    ASSERT_TRUE(hasher.add(at, {content.data() + at, static_cast<std::size_t>(length)}));
  }
  auto streamed = hasher.finish();
  ASSERT_TRUE(streamed) << streamed.error().message;
  EXPECT_EQ(*streamed, expected->sha256);
  EXPECT_EQ(handed, (std::vector<std::uint64_t>{kStoredBlock, 4 * kStoredBlock, 5 * kStoredBlock}));
  EXPECT_EQ(rebuilt, content);

  StoredHasher bounded(10, {});
  EXPECT_FALSE(bounded.add(8, std::string_view("abc")));  // past its size
  ASSERT_TRUE(bounded.add(4, std::string_view("ab")));
  EXPECT_FALSE(bounded.add(0, std::string_view("a")));  // before what was added
}

}  // namespace
}  // namespace gl
