// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_records.hpp"

#include <sys/stat.h>

#include "temp_tree.hpp"
#include "util/state_paths.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using CacheRecordsTest = test::RootTree;

FingerprintInputs inputs() {
  FingerprintInputs inputs;
  inputs.toolkit_path = "/usr/local/cuda-13.0";
  inputs.toolkit_version = "13.0.48";
  inputs.gpu_archs = {"12.0"};
  inputs.engine_version = "a\\b\nc";  // escaped on its line
  return inputs;
}

TEST(Stamp, RoundTrips) {
  const Stamp written = make_stamp("/var/cache/gpulaunch/k26", inputs());
  auto stamp = parse_stamp(stamp_text(written));
  ASSERT_TRUE(stamp);
  EXPECT_EQ(stamp->root, "/var/cache/gpulaunch/k26");
  EXPECT_EQ(stamp->hash, fingerprint_hex(fingerprint_hash(inputs())));
  ASSERT_EQ(stamp->fields.size(), fingerprint_fields(inputs()).size());
  EXPECT_EQ(stamp->fields[0].value, "/usr/local/cuda-13.0");
  EXPECT_EQ(stamp_text(*stamp), stamp_text(written));
}

TEST(Stamp, AnythingButAStampIsNone) {
  const std::string good = stamp_text(make_stamp("/cache", inputs()));
  ASSERT_TRUE(parse_stamp(good));
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  EXPECT_FALSE(parse_stamp(""));
  EXPECT_FALSE(parse_stamp(good.substr(0, good.size() - 1))) << "last line not ended";
  EXPECT_FALSE(parse_stamp("hash=1234\n"));
  EXPECT_FALSE(parse_stamp(replaced("fingerprint v2", "fingerprint v1")));
  EXPECT_FALSE(parse_stamp(replaced("13.0.48", "12.8.93"))) << "fields not matching the hash";
  EXPECT_FALSE(parse_stamp(replaced("root=/cache", "root=cache"))) << "relative root";
  EXPECT_FALSE(parse_stamp(replaced("root=/cache", "root=/x/../cache"))) << "root not normal";
  EXPECT_FALSE(parse_stamp(replaced("a\\\\b", "a\\tb"))) << "unknown escape";
  EXPECT_FALSE(parse_stamp(good + "toolkit_path=/x\n")) << "a field twice";
  EXPECT_FALSE(parse_stamp(good + "Name=x\n")) << "a name that is not one";
  EXPECT_FALSE(parse_stamp(good + "no equals sign\n"));
  // What the old layout's race could have copied in: any root-readable file.
  EXPECT_FALSE(parse_stamp("root:$y$j9T$secret:19700:0:99999:7:::\n"));
}

TEST(CreatedRecord, RoundTripsAndRefusesAnythingElse) {
  const std::vector<CreatedDirectory> directories{{"/scratch/flashinfer", {2049, 131}},
                                                  {"/fast disk/x", {66, 7}}};
  auto parsed = parse_created(created_text(directories));
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[1].path, "/fast disk/x");
  EXPECT_EQ((*parsed)[1].identity, (FileIdentity{66, 7}));
  const std::string header = "# gpulaunch created cache directories v1\n";
  EXPECT_TRUE(parse_created(header));
  EXPECT_FALSE(parse_created(header + "2049 131 scratch\n"));
  EXPECT_FALSE(parse_created(header + "2049 -1 /scratch\n"));
  EXPECT_FALSE(parse_created(header + "2049 /scratch\n"));
  EXPECT_FALSE(parse_created("2049 131 /scratch\n"));
  EXPECT_FALSE(parse_created(header + "2049 131 -5 /scratch\n"));
  EXPECT_FALSE(parse_created(header + "2049 131 17x /scratch\n"));
}

TEST(CreatedRecord, KeepsTheBirthTimeAndReadsRecordsWrittenWithoutOne) {
  const std::string header = "# gpulaunch created cache directories v1\n";
  EXPECT_EQ(created_text({{"/scratch/fi", {2049, 131}, 1764700000123456789}}),
            header + "2049 131 1764700000123456789 /scratch/fi\n");
  auto parsed = parse_created(header + "2049 131 1764700000123456789 /scratch/fi\n");
  ASSERT_TRUE(parsed);
  EXPECT_EQ((*parsed)[0].birth, 1764700000123456789);
  // Written before birth times were kept: the birth is unknown, and the rest as it was.
  auto old = parse_created(header + "2049 131 /scratch/fi\n");
  ASSERT_TRUE(old);
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0].path, "/scratch/fi");
  EXPECT_EQ((*old)[0].identity, (FileIdentity{2049, 131}));
  EXPECT_EQ((*old)[0].birth, 0);
}

TEST(CacheRecordsPath, MovesStatePathsPlaceUnderAnotherStateRoot) {
  EXPECT_EQ(cache_records_directory("k26", "/tmp/t/state"), fs::path("/tmp/t/state/k26/caches"));
  EXPECT_EQ(cache_records_directory("k26", state_paths::kStateRoot),
            state_paths::cache_stamp_directory("k26"));
}

TEST_F(CacheRecordsTest, WritesReadsAndRemovesTheStampRootOwned) {
  auto records = CacheRecords::open(this->records());
  ASSERT_TRUE(records) << records.error().message;
  auto none = records->stamp();
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  ASSERT_TRUE(records->write_stamp(make_stamp("/cache", inputs())));
  EXPECT_EQ(fs::status(this->records() / "fingerprint").permissions(), fs::perms(0644));
  auto read = records->stamp();
  ASSERT_TRUE(read && *read);
  EXPECT_EQ((*read)->root, "/cache");
  ASSERT_TRUE(records->remove_stamp());
  EXPECT_FALSE(fs::exists(this->records() / "fingerprint"));
}

TEST_F(CacheRecordsTest, AFifoAtTheStampIsRefusedWithoutBlocking) {
  auto records = CacheRecords::open(this->records());
  ASSERT_TRUE(records);
  ASSERT_EQ(::mkfifo((this->records() / "fingerprint").c_str(), 0644), 0);
  auto read = records->stamp();
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("is a FIFO"), std::string::npos) << read.error().message;
}

TEST_F(CacheRecordsTest, OnlyTheRecordedDirectoryAtItsPathCountsAsCreated) {
  auto records = CacheRecords::open(this->records());
  ASSERT_TRUE(records);
  ASSERT_TRUE(records->record_created({"/scratch/flashinfer", {10, 20}}));
  ASSERT_TRUE(records->record_created({"/scratch/tvm", {10, 21}}));
  ASSERT_TRUE(records->record_created({"/scratch/flashinfer", {10, 22}}));  // made again
  EXPECT_TRUE(records->was_created("/scratch/flashinfer", {10, 22}, 0).value());
  EXPECT_FALSE(records->was_created("/scratch/flashinfer", {10, 20}, 0).value());
  EXPECT_FALSE(records->was_created("/scratch/tvm", {11, 21}, 0).value());
  EXPECT_FALSE(records->was_created("/scratch/other", {10, 21}, 0).value());
  // The same device and inode born at another time: the inode number was handed out again.
  ASSERT_TRUE(records->record_created({"/scratch/dg", {10, 30}, 1000}));
  EXPECT_TRUE(records->was_created("/scratch/dg", {10, 30}, 1000).value());
  EXPECT_FALSE(records->was_created("/scratch/dg", {10, 30}, 2000).value());
  EXPECT_TRUE(records->was_created("/scratch/dg", {10, 30}, 0).value())
      << "a filesystem that keeps no birth times: device and inode decide, as before";
  // A record that is not one vouches for nothing.
  test::TempTree::write(this->records() / "created-directories", "/scratch/tvm\n");
  EXPECT_FALSE(records->was_created("/scratch/tvm", {10, 21}, 0).value());
}

TEST_F(CacheRecordsTest, LookingCreatesNothing) {
  auto records = CacheRecords::open_existing(this->records());
  ASSERT_TRUE(records);
  EXPECT_FALSE(*records);
  EXPECT_FALSE(fs::exists(base / "state"));
}

TEST(CacheRecordsText, TheOwnerRecordReadsBackAndAnythingElseIsNone) {
  const DirectoryOwner owner{4242, 4243};
  const std::string text = owner_text(owner);
  EXPECT_EQ(text, "# gpulaunch cache owner v1\nuid=4242\ngid=4243\n");
  auto parsed = parse_owner(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->uid, 4242u);
  EXPECT_EQ(parsed->gid, 4243u);
  for (std::string_view bad : {"", "uid=1\ngid=1\n", "# gpulaunch cache owner v1\nuid=1\n",
                               "# gpulaunch cache owner v1\nuid=-1\ngid=1\n",
                               "# gpulaunch cache owner v1\nuid=4294967295\ngid=1\n",
                               "# gpulaunch cache owner v1\nuid=1\ngid=1\nextra=1\n",
                               "# gpulaunch cache owner v1\nuid=01\ngid=1\n"})
    EXPECT_FALSE(parse_owner(bad)) << bad;
}

}  // namespace
}  // namespace gl
