// SPDX-License-Identifier: Apache-2.0
// cache export -> cache import between two cache roots (two "nodes"), and what import refuses:
// other facts, altered content, links, devices, absolute or climbing names, duplicates, and a
// cache directory that is a link. Each refusal leaves the caches as they were.

#include "caches/cache_import.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <gmock/gmock.h>

#include "caches/archive_manifest.hpp"
#include "caches/cache_export.hpp"
#include "caches/cache_state.hpp"
#include "support/tar_bytes.hpp"
#include "temp_tree.hpp"
#include "util/sha256.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using test::TarMember;
using ::testing::HasSubstr;

FingerprintInputs node(const std::string& torch = "2.9.0+cu130") {
  FingerprintInputs inputs;
  inputs.toolkit_path = "/usr/local/cuda-13.0";
  inputs.toolkit_version = "13.0.48";
  inputs.driver_version = "580.65.06";
  inputs.gpu_archs = {"12.0"};
  inputs.torch_version = torch;
  inputs.flashinfer_version = "0.6.7";
  inputs.engine = "sglang";
  inputs.engine_version = "0.5.6";
  return inputs;
}

class CacheImport : public test::RootTree {
 protected:
  void SetUp() override {
    test::RootTree::SetUp();
    if (IsSkipped()) return;
    first = plan_under(base / "a");
    second = plan_under(base / "b");
  }

  PrepareOptions options_of(const std::string& node_name) const {
    return {base / node_name / "state", {::geteuid(), ::getegid()}};
  }

  // The first node's caches after a compile: FlashInfer's JIT object, a Triton kernel.
  void compile_on_first(const FingerprintInputs& inputs = node()) {
    ASSERT_TRUE(prepare_caches(first, inputs, options_of("state-a")));
    write(base / "a/flashinfer/0.6.7/120/cached_ops/norm/norm.so", "flashinfer object");
    write(base / "a/triton/ABCD/kernel.cubin", std::string(100'000, 'k'));
  }

  fs::path export_first(const FingerprintInputs& inputs = node(),
                        const std::vector<std::string>& names = {}) {
    const fs::path archive = base / "caches.tar.zst";
    UniqueFd fd(::open(archive.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    EXPECT_TRUE(fd);
    auto manifest = export_caches(first, "k26", inputs, base / "state-a/state", names, fd.get(),
                                  archive.string());
    EXPECT_TRUE(manifest) << manifest.error().message;
    return archive;
  }

  Result<ImportReport> import_into_second(const fs::path& archive,
                                          const FingerprintInputs& inputs = node(),
                                          const DigestLimits& limits = {}) {
    UniqueFd fd(::open(archive.c_str(), O_RDONLY | O_CLOEXEC));
    EXPECT_TRUE(fd) << archive;
    return import_caches(second, inputs, ImportOptions{options_of("state-b"), limits}, fd.get(),
                         archive.string());
  }

  fs::path write_archive(const std::string& bytes) {
    const fs::path archive = base / "crafted.tar";
    std::ofstream(archive, std::ios::binary) << bytes;
    return archive;
  }

  // The manifest and file list for flashinfer holding exactly `files` (path -> content),
  // digested as digest_tree would, with this node's facts.
  static std::vector<TarMember> lists_for(
      const std::vector<std::pair<std::string, std::string>>& files) {
    std::vector<std::pair<std::string, std::string>> sorted = files;
    std::sort(sorted.begin(), sorted.end());
    std::string records;
    std::uint64_t bytes = 0;
    for (const auto& [path, content] : sorted) {
      // sha256_stored_hex of a file under 64 KiB: its one block at offset 0.
      std::string block(8, '\0');
      block += content;
      records += path + '\0' + std::to_string(content.size()) + '\0' + sha256_hex(block) + '\n';
      bytes += content.size();
    }
    const JitCache* entry = find_jit_cache("flashinfer");
    ArchiveManifest manifest{
        "k26",
        {{"flashinfer", cache_fingerprint(entry, node()), cache_fingerprint_fields(entry, node()),
          sha256_hex(records), sorted.size(), bytes}}};
    return {{std::string(kManifestMember), manifest_text(manifest)},
            {std::string(kRecordsDirectory) + "/flashinfer", records}};
  }

  // An archive: the lists for `listed`, then `members`.
  static std::string archive_bytes(const std::vector<std::pair<std::string, std::string>>& listed,
                                   const std::vector<TarMember>& members) {
    auto all = lists_for(listed);
    all.insert(all.end(), members.begin(), members.end());
    return test::tar_bytes(all);
  }

  // The second node with a compiled FlashInfer object of its own, stamped current.
  void second_holds_its_own() {
    ASSERT_TRUE(prepare_caches(second, node(), options_of("state-b")));
    write(base / "b/flashinfer/own.so", "the second node's own");
  }

  void expect_second_untouched() {
    EXPECT_EQ(read(base / "b/flashinfer/own.so"), "the second node's own");
    for (const auto& entry : fs::recursive_directory_iterator(base / "b"))
      EXPECT_FALSE(entry.path().filename().string().starts_with(".trash-")) << entry.path();
  }

  LaunchPlan first;
  LaunchPlan second;
};

TEST_F(CacheImport, ARoundTripFillsAnEmptyOwnedCacheThatTheNextStartKeeps) {
  compile_on_first();
  const auto archive = export_first();
  auto report = import_into_second(archive);
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->caches.size(), 2u);
  EXPECT_EQ(report->caches[0].name, "flashinfer");
  EXPECT_EQ(report->caches[0].files, 1u);
  EXPECT_EQ(read(base / "b/flashinfer/0.6.7/120/cached_ops/norm/norm.so"), "flashinfer object");
  EXPECT_EQ(read(base / "b/triton/ABCD/kernel.cubin"), std::string(100'000, 'k'));
  // The same digest as the first node's, as `up --all-nodes` compares them.
  auto digests_a = cache_digests(first, node(), base / "state-a/state");
  auto digests_b = cache_digests(second, node(), base / "state-b/state");
  ASSERT_TRUE(digests_a && digests_b);
  for (size_t i = 0; i < digests_a->size(); ++i)
    EXPECT_EQ((*digests_a)[i].digest.sha256, (*digests_b)[i].digest.sha256) << (*digests_a)[i].name;
  // The stamp is this node's: the next start clears nothing.
  auto start = prepare_caches(second, node(), options_of("state-b"));
  ASSERT_TRUE(start) << start.error().message;
  EXPECT_TRUE(start->removals.empty());
  EXPECT_TRUE(fs::exists(base / "b/flashinfer/0.6.7/120/cached_ops/norm/norm.so"));
}

TEST_F(CacheImport, ImportedFilesBelongToTheServiceUser) {
  compile_on_first();
  const auto archive = export_first();
  UniqueFd fd(::open(archive.c_str(), O_RDONLY | O_CLOEXEC));
  const DirectoryOwner engine{65534, 65534};
  auto report = import_caches(second, node(), ImportOptions{{base / "state-b/state", engine}, {}},
                              fd.get(), archive.string());
  ASSERT_TRUE(report) << report.error().message;
  for (const fs::path& path : {base / "b/flashinfer", base / "b/flashinfer/0.6.7/120/cached_ops",
                               base / "b/flashinfer/0.6.7/120/cached_ops/norm/norm.so",
                               base / "b/triton/ABCD/kernel.cubin"}) {
    struct stat info {};
    ASSERT_EQ(::lstat(path.c_str(), &info), 0) << path;
    EXPECT_EQ(info.st_uid, 65534u) << path;
    EXPECT_EQ(info.st_mode & 07022, 0u) << path;  // no set-id bit, no group or world write
  }
}

TEST_F(CacheImport, OtherFactsAreRefusedNamingTheFactAndNothingIsWritten) {
  compile_on_first(node("2.9.0+cu128"));
  const auto archive = export_first(node("2.9.0+cu128"), {"flashinfer"});
  auto report = import_into_second(archive, node("2.9.1+cu130"));
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message,
              HasSubstr("Refusing to import cache 'flashinfer' from '" + archive.string() +
                        "': it was compiled for other facts than this node's: torch_version "
                        "2.9.1+cu130 here, 2.9.0+cu128 in the archive"));
  EXPECT_FALSE(fs::exists(base / "b")) << "refused before the caches were even prepared";
}

TEST_F(CacheImport, ContentThatDoesNotMatchItsDigestIsRefusedAndTheCacheKept) {
  second_holds_its_own();
  // One byte of the member changed after the manifest was written.
  const auto archive = write_archive(archive_bytes(
      {{"k/a.so", "compiled kernel"}}, {{"caches/flashinfer/k/a.so", "compiled kernel!"}}));
  auto report = import_into_second(archive);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().message,
            "Refusing to import '" + archive.string() +
                "': member 'caches/flashinfer/k/a.so' claims 16 bytes; the cache's file list "
                "says 15");
  expect_second_untouched();

  const auto same_size = write_archive(archive_bytes(
      {{"k/a.so", "compiled kernel"}}, {{"caches/flashinfer/k/a.so", "compiled kernal"}}));
  report = import_into_second(same_size);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().message,
            "Refusing to import '" + same_size.string() +
                "': member 'caches/flashinfer/k/a.so' does not match the content digest in its "
                "manifest; the archive was altered or damaged");
  expect_second_untouched();

  // The list itself altered: it no longer hashes to the manifest's digest.
  auto lists = lists_for({{"k/a.so", "compiled kernel"}});
  lists[1].content[0] = 'j';
  lists.push_back({"caches/flashinfer/j/a.so", "compiled kernel"});
  const auto relisted = write_archive(test::tar_bytes(lists));
  report = import_into_second(relisted);
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message,
              HasSubstr("member 'gpulaunch-cache-records/flashinfer' does not match the content "
                        "digest in its manifest"));
  expect_second_untouched();
}

TEST_F(CacheImport, AnUnalteredCraftedArchiveIsImported) {
  // The crafted archives below differ from this one only in what is refused.
  second_holds_its_own();
  auto report = import_into_second(write_archive(archive_bytes(
      {{"k/a.so", "compiled kernel"}}, {{"caches/flashinfer/k/a.so", "compiled kernel"}})));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(read(base / "b/flashinfer/k/a.so"), "compiled kernel");
  EXPECT_FALSE(fs::exists(base / "b/flashinfer/own.so")) << "replaced whole";
}

TEST_F(CacheImport, LinksDevicesAndNamesOutsideTheCacheAreRefused) {
  second_holds_its_own();
  write(base / "outside/secret", "root's");
  const auto lists = lists_for({{"k/a.so", "compiled kernel"}});
  const TarMember good{"caches/flashinfer/k/a.so", "compiled kernel"};
  const std::vector<std::pair<TarMember, std::string>> cases{
      {{"caches/flashinfer/k/link.so", "", '2', (base / "outside/secret").string()},
       "is a symbolic link; an archive holds only regular files and directories"},
      {{"caches/flashinfer/k/hard.so", "", '1', "caches/flashinfer/k/a.so"}, "is a hard link"},
      {{"caches/flashinfer/k/tty", "", '3'}, "is a character device"},
      {{"caches/flashinfer/k/fifo", "", '6'}, "is a FIFO"},
      {{"/etc/gpulaunch-evil", "x"}, "has an absolute path"},
      {{"caches/flashinfer/../../outside/evil", "x"}, "has a '..' component"},
      {{"caches/flashinfer/k/./a.so", "x"}, "has an empty or '.' component"},
      {{"caches/flashinfer/.trash-x/a.so", "x"}, "has a '.trash-*' component"},
      {{"caches/flashinfer/k/a.so", "compiled kernel"}, "appears twice"},
      {{"caches/flashinfer/k/a.so/b", "x"}, "is not one of the files the cache's list names"},
      {{"caches/flashinfer/k/a.so", "", '5'}, "is a directory that holds none of the files"},
      {{"caches/flashinfer/k/b.so", "x"}, "is not one of the files the cache's list names"},
      {{"caches/vllm/x", "x"}, "belongs to no cache the manifest lists"},
      {{"elsewhere/x", "x"}, "is outside caches/"},
  };
  for (const auto& [member, why] : cases) {
    auto all = lists;
    all.push_back(good);
    all.push_back(member);
    auto report = import_into_second(write_archive(test::tar_bytes(all)));
    ASSERT_FALSE(report) << member.name;
    EXPECT_THAT(report.error().message, HasSubstr(why)) << member.name;
    expect_second_untouched();
  }
  EXPECT_EQ(read(base / "outside/secret"), "root's");
  EXPECT_FALSE(fs::exists(base / "outside/evil"));
  EXPECT_FALSE(fs::exists("/etc/gpulaunch-evil"));
}

TEST_F(CacheImport, ADirectoryThenAFileOfTheSameNameIsRefused) {
  second_holds_its_own();
  const auto archive = write_archive(archive_bytes(
      {{"k", "x"}, {"k/a", "x"}}, {{"caches/flashinfer/k/a", "x"}, {"caches/flashinfer/k", "x"}}));
  auto report = import_into_second(archive);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().message, "Refusing to import '" + archive.string() +
                                        "': member 'caches/flashinfer/k' is both a file and a "
                                        "directory");
  expect_second_untouched();
}

TEST_F(CacheImport, ImportNeverWritesThroughALinkedCacheDirectory) {
  compile_on_first();
  const auto archive = export_first(node(), {"flashinfer"});
  ASSERT_TRUE(prepare_caches(second, node(), options_of("state-b")));
  write(base / "outside/keep", "not the engine's");
  fs::remove(base / "b/flashinfer");
  fs::create_directory_symlink(base / "outside", base / "b/flashinfer");
  auto report = import_into_second(archive);
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message,
              HasSubstr("Refusing to replace '" + (base / "b/flashinfer").string() +
                        "': it is a symbolic link or not a directory; not followed"));
  EXPECT_TRUE(fs::is_symlink(base / "b/flashinfer"));
  EXPECT_EQ(read(base / "outside/keep"), "not the engine's");
  EXPECT_FALSE(fs::exists(base / "outside/0.6.7"));
  for (const auto& entry : fs::directory_iterator(base / "b"))
    EXPECT_FALSE(entry.path().filename().string().starts_with(".trash-")) << entry.path();
}

TEST_F(CacheImport, AnArchiveOverTheLimitsIsRefused) {
  compile_on_first();
  const auto archive = export_first();
  auto report = import_into_second(archive, node(), DigestLimits{0, 1 << 30});
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message, HasSubstr("over the limit of 0 files"));
  report = import_into_second(archive, node(), DigestLimits{10, 1000});
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message, HasSubstr("over the limit of 10 files, 1000 bytes"));
}

TEST_F(CacheImport, ACacheOutsideTheRootStaysGpulaunchsAfterTheSwap) {
  for (auto* plan : {&first, &second})
    for (auto& cache : plan->caches)
      if (cache.name == "flashinfer")
        cache.directory = (base / (plan == &first ? "fi-a" : "fi-b") / "flashinfer").string();
  ASSERT_TRUE(prepare_caches(first, node(), options_of("state-a")));
  write(base / "fi-a/flashinfer/k/a.so", "compiled kernel");
  const auto archive = export_first(node(), {"flashinfer"});
  auto report = import_into_second(archive);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(read(base / "fi-b/flashinfer/k/a.so"), "compiled kernel");
  // Recorded anew: the next start takes it for gpulaunch's and keeps it.
  auto start = prepare_caches(second, node(), options_of("state-b"));
  ASSERT_TRUE(start) << start.error().message;
  EXPECT_EQ(read(base / "fi-b/flashinfer/k/a.so"), "compiled kernel");
  for (const auto& entry : fs::directory_iterator(base / "fi-b"))
    EXPECT_EQ(entry.path().filename(), "flashinfer") << "no leftover beside it";
}

TEST_F(CacheImport, AnArchiveOfAnotherProfilesCacheOrNoManifestIsRefused) {
  auto report =
      import_into_second(write_archive(test::tar_bytes({{"caches/flashinfer/a.so", "x"}})));
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message,
              HasSubstr("it does not begin with gpulaunch-cache-archive.json"));
  second.caches.erase(std::remove_if(second.caches.begin(), second.caches.end(),
                                     [](const auto& cache) { return cache.name == "flashinfer"; }),
                      second.caches.end());
  report = import_into_second(write_archive(archive_bytes(
      {{"k/a.so", "compiled kernel"}}, {{"caches/flashinfer/k/a.so", "compiled kernel"}})));
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message,
              HasSubstr("it holds cache 'flashinfer', which this profile does not use"));
}

// Issue 45, finding 1: 2,500 empty files 80 directories deep once made root create 200,000
// directories before any digest was checked. The lists imply them: refused before anything is
// created, the caches not even prepared.
TEST_F(CacheImport, TheDirectoriesTheListsImplyAreBoundedBeforeAnyIsCreated) {
  std::vector<std::pair<std::string, std::string>> deep;
  for (int i = 0; i < 2500; ++i) {
    std::string path;
    for (int level = 0; level < 80; ++level) path += fmt::format("d{}x{}/", i, level);
    deep.push_back({path + "f", ""});
  }
  const auto archive = write_archive(archive_bytes(deep, {}));
  auto report = import_into_second(archive);
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message,
              HasSubstr("': the files listed imply over 100000 directories or 16777216 bytes of "
                        "directory names"));
  EXPECT_FALSE(fs::exists(base / "b")) << "refused before the caches were even prepared";
}

// The read-only item: the write bound is what the digest covers, checked as the member streams.
// A member that claims more than its listed size is refused at its header, before a byte of its
// 64 MiB of zeros is read or written; zeros the list does cover are left a hole.
TEST_F(CacheImport, AMemberIsBoundByItsListedSizeAndItsZerosStayAHole) {
  second_holds_its_own();
  const std::string zeros(64 << 20, '\0');
  const auto bomb = write_archive(
      archive_bytes({{"k/a.so", std::string(100, 'x')}}, {{"caches/flashinfer/k/a.so", zeros}}));
  auto report = import_into_second(bomb);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().message,
            "Refusing to import '" + bomb.string() +
                "': member 'caches/flashinfer/k/a.so' claims 67108864 bytes; the cache's file "
                "list says 100");
  expect_second_untouched();

  std::string sparse(4 << 20, '\0');
  sparse.replace(1 << 20, 6, "kernel");  // one stored block in 64
  // Its honest list: the one stored block, after its offset.
  const JitCache* entry = find_jit_cache("flashinfer");
  std::string block(8, '\0');
  const std::uint64_t at = 1 << 20;
  for (int i = 0; i < 8; ++i) block[i] = static_cast<char>((at >> (8 * i)) & 0xff);
  block += sparse.substr(at, kStoredBlock);
  const std::string list = "k/a.so" + std::string(1, '\0') + std::to_string(sparse.size()) +
                           std::string(1, '\0') + sha256_hex(block) + "\n";
  ArchiveManifest manifest{
      "k26",
      {{"flashinfer", cache_fingerprint(entry, node()), cache_fingerprint_fields(entry, node()),
        sha256_hex(list), 1, sparse.size()}}};
  report = import_into_second(
      write_archive(test::tar_bytes({{std::string(kManifestMember), manifest_text(manifest)},
                                     {std::string(kRecordsDirectory) + "/flashinfer", list},
                                     {"caches/flashinfer/k/a.so", sparse}})));
  ASSERT_TRUE(report) << report.error().message;
  struct stat info {};
  ASSERT_EQ(::stat((base / "b/flashinfer/k/a.so").c_str(), &info), 0);
  EXPECT_EQ(static_cast<std::uint64_t>(info.st_size), sparse.size());
  EXPECT_LE(static_cast<std::uint64_t>(info.st_blocks) * 512, 2 * kStoredBlock)
      << "only the block that is not all zero is written";
  EXPECT_EQ(read(base / "b/flashinfer/k/a.so"), sparse);
}

// Import keeps a reserve of the cache's filesystem: here one larger than the filesystem, in
// bytes and then in inodes, so nothing may be written at all.
TEST_F(CacheImport, ImportStopsBeforeTheFilesystemWouldDropBelowItsReserve) {
  compile_on_first();
  const auto archive = export_first();
  second_holds_its_own();
  UniqueFd fd(::open(archive.c_str(), O_RDONLY | O_CLOEXEC));
  ImportOptions options{options_of("state-b"), {}, {UINT64_MAX, 0, 100}};
  auto report = import_caches(second, node(), options, fd.get(), archive.string());
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message, HasSubstr("would leave less than"));
  EXPECT_THAT(report.error().message, HasSubstr("import keeps 100% of it"));
  expect_second_untouched();

  fd = UniqueFd(::open(archive.c_str(), O_RDONLY | O_CLOEXEC));
  options.reserve = {0, UINT64_MAX, 100};
  report = import_caches(second, node(), options, fd.get(), archive.string());
  ASSERT_FALSE(report);
  EXPECT_THAT(report.error().message, HasSubstr("would leave fewer than"));
  expect_second_untouched();
}

// Export bounds apparent size (issue 45, finding 5): a terabyte sparse file, no byte of it
// stored, is refused from its size alone instead of being read as zeros.
TEST_F(CacheImport, ExportRefusesASparseTerabyteUnread) {
  compile_on_first();
  { std::ofstream touch(base / "a/triton/ABCD/huge.bin"); }
  fs::resize_file(base / "a/triton/ABCD/huge.bin", 1ULL << 40);
  const fs::path archive = base / "caches.tar.zst";
  UniqueFd fd(::open(archive.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  auto manifest =
      export_caches(first, "k26", node(), base / "state-a/state", {}, fd.get(), archive.string());
  ASSERT_FALSE(manifest);
  EXPECT_THAT(manifest.error().message,
              HasSubstr("its files' apparent sizes add up to 1099511727776 bytes, over the limit "
                        "of 68719476736 (a sparse file counts its holes)"));
}

}  // namespace
}  // namespace gl
