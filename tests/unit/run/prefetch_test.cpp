// SPDX-License-Identifier: Apache-2.0
#include "run/prefetch.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include <gtest/gtest.h>

namespace gl {
namespace {

constexpr uint64_t GiB = 1ULL << 30;

// Files with a given residency; records every read and how many ran at once.
class FakeIo final : public PrefetchIo {
 public:
  std::vector<WeightFile> listed;
  std::vector<std::string> left;
  std::vector<uint64_t> resident;
  std::set<size_t> unreadable;  // residency cannot be read
  std::set<size_t> failing;     // reads fail
  std::optional<uint64_t> available;

  std::mutex mutex;
  std::vector<std::tuple<size_t, uint64_t, uint64_t>> reads;
  int running = 0;
  int most_running = 0;
  bool hold_first_read = false;
  bool first_read_done = false;
  bool second_arrived = false;
  std::condition_variable second_reader;

  const std::vector<WeightFile>& files() const override { return listed; }
  const std::vector<std::string>& skipped() const override { return left; }
  Result<uint64_t> resident_bytes(size_t file) override {
    if (unreadable.contains(file)) return failf("Failed to map '{}': denied", listed[file].shown);
    return resident[file];
  }
  Result<void> read_range(size_t file, uint64_t offset, uint64_t length) override {
    std::unique_lock lock(mutex);
    reads.emplace_back(file, offset, length);
    most_running = std::max(most_running, ++running);
    // With hold_first_read, the first read holds its thread until a second reader arrives, so a
    // run that reads on several threads is seen doing so without sleeping; one on a single
    // thread never brings a second and shows most_running 1 after the bound (a failure, not a
    // wait in passing runs).
    if (hold_first_read && !first_read_done) {
      first_read_done = true;
      second_reader.wait_for(lock, std::chrono::seconds(10), [&] { return second_arrived; });
    } else if (first_read_done && !second_arrived) {
      second_arrived = true;
      second_reader.notify_all();
    }
    --running;
    if (failing.contains(file)) return failf("Failed to read '{}': I/O error", listed[file].shown);
    return {};
  }
  std::optional<uint64_t> memory_available() override { return available; }

  void add(std::string name, uint64_t size, uint64_t in_cache = 0) {
    listed.push_back({"/models/m/" + name, size});
    resident.push_back(in_cache);
  }
};

TEST(PrefetchPlan, SkipsFilesWhollyInThePageCache) {
  FakeIo io;
  io.add("a.safetensors", 4 * GiB, 4 * GiB);
  io.add("b.safetensors", 4 * GiB, 1 * GiB);
  io.add("c.safetensors", 4 * GiB);
  io.available = 100 * GiB;
  const PrefetchPlan plan = plan_prefetch(io, {});
  EXPECT_EQ(plan.resident, std::vector<size_t>{0});
  EXPECT_EQ(plan.read, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(plan.bytes_to_read, 7 * GiB);  // only what is not resident counts against memory
  EXPECT_EQ(plan.bytes_resident, 5 * GiB);
  EXPECT_FALSE(plan.stopped_at);
}

TEST(PrefetchPlan, StopsAtTheFirstFileThatWouldNotFitTheFreeMemory) {
  FakeIo io;
  io.add("1.safetensors", 3 * GiB);
  io.add("2.safetensors", 3 * GiB);
  io.add("3.safetensors", 3 * GiB, 3 * GiB);  // resident: still counted as skipped, not left
  io.add("4.safetensors", 1 * GiB);
  io.available = 8 * GiB;  // 6 GiB after the margin: the first two fit, nothing after the stop
  const PrefetchPlan plan = plan_prefetch(io, {});
  EXPECT_EQ(plan.read, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(plan.resident, std::vector<size_t>{2});
  EXPECT_EQ(plan.stopped_at, std::optional<size_t>(3));
  EXPECT_EQ(plan.budget, std::optional<uint64_t>(6 * GiB));
  auto reason = prefetch_stop_reason(io, plan);
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason,
            "stopped before '/models/m/4.safetensors' (1.0 GiB): it would not fit the free "
            "memory (MemAvailable, or the cgroup's room where smaller, less a 2.0 GiB margin: "
            "6.0 GiB, 6.0 GiB of it for the files before); 1 file(s), 1.0 GiB, left unread");
}

TEST(PrefetchPlan, ResidentFilesAfterTheStopAreStillSkippedNotLeft) {
  FakeIo io;
  io.add("1.safetensors", 5 * GiB);
  io.add("2.safetensors", 1 * GiB, 1 * GiB);
  io.available = 4 * GiB;
  const PrefetchPlan plan = plan_prefetch(io, {});
  EXPECT_TRUE(plan.read.empty());
  EXPECT_EQ(plan.stopped_at, std::optional<size_t>(0));
  EXPECT_EQ(plan.resident, std::vector<size_t>{1});
  EXPECT_NE(prefetch_stop_reason(io, plan)->find("1 file(s), 5.0 GiB, left unread"),
            std::string::npos);
}

TEST(PrefetchPlan, LessFreeThanTheMarginReadsNothing) {
  FakeIo io;
  io.add("a.gguf", 1);
  io.available = 1 * GiB;
  const PrefetchPlan plan = plan_prefetch(io, {});
  EXPECT_TRUE(plan.read.empty());
  EXPECT_EQ(plan.budget, std::optional<uint64_t>(0));
}

TEST(PrefetchPlan, WithoutMemAvailableNothingBoundsIt) {
  FakeIo io;
  io.add("a.safetensors", 500 * GiB);
  const PrefetchPlan plan = plan_prefetch(io, {});
  EXPECT_EQ(plan.read, std::vector<size_t>{0});
  EXPECT_FALSE(plan.budget);
}

TEST(PrefetchPlan, UnknownResidencyIsReadAndSaid) {
  FakeIo io;
  io.add("a.safetensors", 1 * GiB);
  io.unreadable.insert(0);
  io.left.push_back("'/models/m/x.safetensors' links out of the model's directory: not read");
  io.available = 64 * GiB;
  const PrefetchPlan plan = plan_prefetch(io, {});
  EXPECT_EQ(plan.read, std::vector<size_t>{0});
  ASSERT_EQ(plan.problems.size(), 2u);
  EXPECT_EQ(plan.problems[0], io.left[0]);
  EXPECT_EQ(plan.problems[1], "Failed to map '/models/m/a.safetensors': denied");
}

TEST(PrefetchPlan, AnEmptyFileIsResident) {
  FakeIo io;
  io.add("empty.safetensors", 0);
  EXPECT_EQ(plan_prefetch(io, {}).resident, std::vector<size_t>{0});
}

TEST(PrefetchRun, ReadsEveryPieceOnceOnBoundedThreads) {
  FakeIo io;
  io.add("big.safetensors", 10 * kPrefetchPiece + 5);
  io.add("small.safetensors", 100);
  io.available = 1000 * GiB;
  io.hold_first_read = true;
  const PrefetchOptions options{3, kPrefetchMemoryMargin};
  const PrefetchPlan plan = plan_prefetch(io, options);
  std::vector<PrefetchProgress> seen;
  const PrefetchResult result =
      run_prefetch(io, plan, options, [&](const PrefetchProgress& p) { seen.push_back(p); });
  EXPECT_EQ(io.reads.size(), 12u);  // 11 pieces of the big file, 1 of the small one
  EXPECT_LE(io.most_running, 3);
  EXPECT_GE(io.most_running, 2);  // the big file is shared between threads
  uint64_t covered = 0;
  for (const auto& [file, offset, length] : io.reads)
    if (file == 0) covered += length;
  EXPECT_EQ(covered, 10 * kPrefetchPiece + 5);
  EXPECT_EQ(result.progress.bytes_done, 10 * kPrefetchPiece + 105);
  EXPECT_EQ(result.progress.bytes_total, result.progress.bytes_done);
  EXPECT_EQ(result.progress.files_done, 2u);
  ASSERT_EQ(seen.size(), 12u);
  EXPECT_EQ(seen.back().files_done, 2u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i].bytes_done, seen[i - 1].bytes_done);
}

TEST(PrefetchRun, AFileThatCannotBeReadIsAProblemAndTheOthersAreRead) {
  FakeIo io;
  io.add("a.safetensors", 3 * kPrefetchPiece);
  io.add("b.safetensors", 10);
  io.failing.insert(0);
  const PrefetchOptions options{1, kPrefetchMemoryMargin};
  const PrefetchResult result = run_prefetch(io, plan_prefetch(io, options), options, nullptr);
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_EQ(result.problems[0], "Failed to read '/models/m/a.safetensors': I/O error");
  EXPECT_EQ(result.progress.files_done, 1u);
  // One thread: the failed file's later pieces are not tried again.
  EXPECT_EQ(io.reads.size(), 2u);
}

TEST(PrefetchRun, NothingToReadStartsNoThread) {
  FakeIo io;
  io.add("a.safetensors", 4096, 4096);
  const PrefetchOptions options;
  const PrefetchResult result = run_prefetch(io, plan_prefetch(io, options), options, nullptr);
  EXPECT_TRUE(io.reads.empty());
  EXPECT_EQ(prefetch_summary(result, 0.5),
            "read 0 of 0 file(s) (0 B) in 0.5 s (0 B/s); 1 file(s) already in the page cache");
}

}  // namespace
}  // namespace gl
