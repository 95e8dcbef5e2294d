// SPDX-License-Identifier: Apache-2.0
#include "caches/archive_manifest.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gl {
namespace {

using ::testing::HasSubstr;

ArchiveManifest one_cache() {
  std::vector<FingerprintField> facts{{"toolkit_version", "13.0.48"},
                                      {"torch_version", "2.9.0+cu128"}};
  return {"k26",
          {{"flashinfer", fingerprint_hex(fingerprint_hash(facts)), facts, std::string(64, 'a'), 3,
            4096}}};
}

TEST(ArchiveManifest, RoundTripsThroughItsText) {
  const auto text = manifest_text(one_cache());
  auto parsed = parse_manifest(text, "a.tar.zst");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->profile, "k26");
  ASSERT_EQ(parsed->caches.size(), 1u);
  const auto& cache = parsed->caches.front();
  EXPECT_EQ(cache.name, "flashinfer");
  EXPECT_EQ(cache.fingerprint, one_cache().caches.front().fingerprint);
  EXPECT_EQ(cache.facts.size(), 2u);
  EXPECT_EQ(cache.facts[1].value, "2.9.0+cu128");
  EXPECT_EQ(cache.files, 3u);
  EXPECT_EQ(cache.bytes, 4096u);
  EXPECT_EQ(manifest_text(*parsed), text);
}

TEST(ArchiveManifest, AnEditedFactNoLongerMatchesItsFingerprint) {
  auto text = manifest_text(one_cache());
  text.replace(text.find("2.9.0+cu128"), 11, "2.9.1+cu130");
  auto parsed = parse_manifest(text, "a.tar.zst");
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message,
              HasSubstr("Failed to read the manifest of 'a.tar.zst': cache 'flashinfer': its "
                        "facts do not hash to its fingerprint"));
}

TEST(ArchiveManifest, AnythingButItsShapeIsRefused) {
  const auto refused = [](const std::string& text) {
    auto parsed = parse_manifest(text, "a");
    return parsed ? std::string("accepted") : parsed.error().message;
  };
  EXPECT_THAT(refused("{}"), HasSubstr("not a gpulaunch cache archive"));
  EXPECT_THAT(refused(R"({"gpulaunch_cache_archive": 1})"), HasSubstr("format 1 is not the 2"));
  EXPECT_THAT(refused(R"({"gpulaunch_cache_archive": 2, "profile": "k", "caches": [1]})"),
              HasSubstr("a cache is not an object"));
  auto twice = one_cache();
  twice.caches.push_back(twice.caches.front());
  EXPECT_THAT(refused(manifest_text(twice)), HasSubstr("cache 'flashinfer' is listed twice"));
  auto bad_name = one_cache();
  bad_name.caches.front().name = "../x";
  EXPECT_THAT(refused(manifest_text(bad_name)), HasSubstr("is not a cache name"));
  auto bad_digest = one_cache();
  bad_digest.caches.front().digest = "zz";
  EXPECT_THAT(refused(manifest_text(bad_digest)), HasSubstr("has no content digest"));
  EXPECT_THAT(refused(std::string(kMaxManifestBytes + 1, ' ')), HasSubstr("over 1048576 bytes"));
}

TEST(ArchiveManifest, DifferencesNameEachFactWithBothValues) {
  const std::vector<FingerprintField> here{
      {"toolkit_version", "13.0.48"}, {"torch_version", "2.9.1+cu130"}, {"gpu_archs", "12.0"}};
  const std::vector<FingerprintField> archived{
      {"toolkit_version", "13.0.48"}, {"torch_version", "2.9.0+cu128"}, {"gpu_archs", ""}};
  EXPECT_EQ(describe_fact_differences(here, archived),
            "torch_version 2.9.1+cu130 here, 2.9.0+cu128 in the archive, gpu_archs 12.0 here, "
            "(unknown) in the archive");
  EXPECT_EQ(describe_fact_differences(here, here), "");
}

TEST(ArchiveManifest, ArchivedPathsStayInsideTheirCache) {
  EXPECT_FALSE(archived_path_problem("0.6.7/120/cached_ops/norm.so"));
  EXPECT_FALSE(archived_path_problem(".trash"));
  EXPECT_EQ(archived_path_problem(""), "an empty name");
  EXPECT_EQ(archived_path_problem("/etc/passwd"), "an absolute path");
  EXPECT_EQ(archived_path_problem("a/../../b"), "a '..' component");
  EXPECT_EQ(archived_path_problem("a//b"), "an empty or '.' component");
  EXPECT_EQ(archived_path_problem("a/./b"), "an empty or '.' component");
  EXPECT_EQ(archived_path_problem("a/.trash-x/b"),
            "a '.trash-*' component (gpulaunch's own leftovers)");
  EXPECT_EQ(archived_path_problem(std::string(256, 'a')), "a component over 255 bytes");
  std::string deep;
  for (int i = 0; i < 129; ++i) deep += "d/";
  deep += "f";
  EXPECT_EQ(archived_path_problem(deep), "deeper than 128 directories");
}

// A cache's file list is the digest's records, read strictly: what the digest hashed, nothing
// more, so the sizes and paths import trusts are the ones the digest covers.
TEST(ArchiveManifest, FileListsAreTheDigestsRecordsReadStrictly) {
  const std::string content(64, 'c');
  const auto record = [&](const std::string& path, const std::string& size) {
    return path + std::string(1, '\0') + size + std::string(1, '\0') + content + "\n";
  };
  auto records = parse_records(record("a/b.so", "12") + record("a/c", "0"), "list");
  ASSERT_TRUE(records) << records.error().message;
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].path, "a/b.so");
  EXPECT_EQ((*records)[0].size, 12u);
  EXPECT_EQ((*records)[1].content, content);
  EXPECT_TRUE(parse_records("", "list"));  // an empty cache

  const auto refused = [](const std::string& text) {
    auto parsed = parse_records(text, "list");
    return parsed ? std::string("accepted") : parsed.error().message;
  };
  EXPECT_EQ(refused(record("b", "1") + record("a", "1")),
            "Failed to read list: record 2: 'a' is not after 'b'");
  EXPECT_THAT(refused(record("a", "1") + record("a", "1")), HasSubstr("'a' is not after 'a'"));
  EXPECT_THAT(refused(record("../x", "1")), HasSubstr("'../x' has a '..' component"));
  EXPECT_THAT(refused(record("/x", "1")), HasSubstr("has an absolute path"));
  EXPECT_THAT(refused(record("a", "01")), HasSubstr("the size is not a count"));
  EXPECT_THAT(refused(record("a", "-1")), HasSubstr("the size is not a count"));
  EXPECT_THAT(refused(record("a", "99999999999999999999")), HasSubstr("the size is not a count"));
  EXPECT_THAT(refused(record("a", "1").substr(0, 20)), HasSubstr("cut short"));
  EXPECT_THAT(refused("a"), HasSubstr("no size"));
  std::string upper = record("a", "1");
  upper[5] = 'C';
  EXPECT_THAT(refused(upper), HasSubstr("is not 64 hex digits and a newline"));
}

}  // namespace
}  // namespace gl
