// SPDX-License-Identifier: Apache-2.0
// The epilog's release of a finished job's GPUs on fakes: who is ended, in which order, with which
// signals, and when the node is said to keep the job's memory.

#include <csignal>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fakes/util/fake_timekeeper.hpp"
#include "supervise/gpu_release.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Processes on GPUs: each ends at the signal it obeys (SIGTERM, SIGKILL, or never: 0), and its
// memory is listed until it ends, or for `held` more polls after (a driver slow to free it).
struct FakeNode {
  struct Process {
    int gpu = 0;
    HolderProcess info;
    int obeys = SIGTERM;
    bool running = true;
    int held_after_exit = 0;
  };
  std::map<unsigned, Process> processes;
  std::vector<std::string> signals;  // "TERM 4242"
  testing::FakeTimekeeper clock;
  std::vector<std::string> said;

  void add(unsigned pid, int gpu, uid_t uid, std::optional<std::string> job, int obeys = SIGTERM) {
    processes[pid] = {gpu, {uid, std::move(job), "python3", 1000 + pid}, obeys, true, 0};
  }

  GpuReleaseIo io() {
    return {[this]() -> Result<std::vector<GpuProcessUse>> {
              std::vector<GpuProcessUse> uses;
              for (auto& [pid, process] : processes) {
                if (!process.running && process.held_after_exit <= 0) continue;
                if (!process.running) --process.held_after_exit;
                uses.push_back({process.gpu, pid, 2048});
              }
              return uses;
            },
            [this](unsigned pid) -> std::optional<HolderProcess> {
              auto found = processes.find(pid);
              if (found == processes.end() || !found->second.running) return std::nullopt;
              return found->second.info;
            },
            [this](unsigned pid, unsigned long long start, int signal) {
              auto& process = processes.at(pid);
              if (!process.running || process.info.start != start) return false;
              signals.push_back(std::string(signal == SIGTERM ? "TERM " : "KILL ") +
                                std::to_string(pid));
              if (signal == process.obeys || signal == SIGKILL) process.running = false;
              return true;
            },
            clock, [this](const std::string& line) { said.push_back(line); }};
  }
};

GpuReleaseInput job_42() {
  GpuReleaseInput input;
  input.job = "42";
  input.uid = 1000;
  input.grace = std::chrono::seconds(5);
  input.wait = std::chrono::seconds(10);
  return input;
}

TEST(GpuRelease, TheJobsLeftoverIsTerminatedAndItsMemoryWaitedFor) {
  FakeNode node;
  node.add(4242, 0, 1000, "42");
  auto io = node.io();
  auto release = release_job_gpus(job_42(), io);
  EXPECT_EQ(release.exit_code, kReleaseOk);
  EXPECT_THAT(node.signals, ElementsAre("TERM 4242"));
  EXPECT_THAT(release.ended, ElementsAre("pid 4242 (python3) on GPU 0, 2048 MiB"));
  EXPECT_EQ(node.clock.slept(), std::chrono::milliseconds(0));
}

// One that ignores SIGTERM gets SIGKILL once the grace is over, not before.
TEST(GpuRelease, SigkillFollowsTheGrace) {
  FakeNode node;
  node.add(4242, 0, 1000, "42", /*obeys=*/0);
  auto io = node.io();
  auto release = release_job_gpus(job_42(), io);
  EXPECT_EQ(release.exit_code, kReleaseOk);
  EXPECT_THAT(node.signals, ElementsAre("TERM 4242", "KILL 4242"));
  EXPECT_EQ(node.clock.slept(), std::chrono::seconds(5));
}

// Root's process, another user's and another job's of the same user stay; a process of the job's
// user naming no job on the job's own GPUs is the job's.
TEST(GpuRelease, OnlyTheJobsOwnProcessesAreSignalled) {
  FakeNode node;
  node.add(100, 0, 0, std::nullopt);
  node.add(200, 0, 1001, "42");
  node.add(300, 1, 1000, "43");
  node.add(400, 1, 1000, std::nullopt);
  auto io = node.io();
  auto release = release_job_gpus(job_42(), io);
  EXPECT_EQ(release.exit_code, kReleaseOk);
  EXPECT_THAT(node.signals, ElementsAre("TERM 400"));
  EXPECT_THAT(release.left_alone,
              ElementsAre("pid 100 (python3) on GPU 0, 2048 MiB: root's",
                          "pid 200 (python3) on GPU 0, 2048 MiB: uid 1001's, not the job's user "
                          "(uid 1000)",
                          "pid 300 (python3) on GPU 1, 2048 MiB: job 43's"));
}

// Without the job's GPUs every GPU is looked at, and a process naming no job is left alone.
TEST(GpuRelease, WithoutTheJobsGpusOnlyProcessesNamingTheJobAreEnded) {
  FakeNode node;
  node.add(400, 1, 1000, std::nullopt);
  node.add(500, 2, 1000, "42");
  auto input = job_42();
  input.gpus_known = false;
  auto io = node.io();
  auto release = release_job_gpus(input, io);
  EXPECT_THAT(node.signals, ElementsAre("TERM 500"));
  EXPECT_THAT(release.left_alone[0], HasSubstr("names no Slurm job"));
}

// The process is gone but the driver keeps listing its memory past the wait: the node is not
// fit for the next job, and the reason names the process.
TEST(GpuRelease, MemoryStillHeldAfterTheWaitIsTheFailure) {
  FakeNode node;
  node.add(4242, 3, 1000, "42");
  node.processes[4242].held_after_exit = 1'000'000;
  auto io = node.io();
  auto release = release_job_gpus(job_42(), io);
  EXPECT_EQ(release.exit_code, kReleaseMemoryHeld);
  EXPECT_EQ(release.problem,
            "gpu-memory-held: job 42's processes ended, their GPU memory still held 10000 ms "
            "later: pid 4242 (python3) on GPU 3, 2048 MiB");
  EXPECT_EQ(node.clock.slept(), std::chrono::seconds(10));
}

// Freed a few polls late: waited for, and fine.
TEST(GpuRelease, MemoryFreedWithinTheWaitIsFine) {
  FakeNode node;
  node.add(4242, 3, 1000, "42");
  node.processes[4242].held_after_exit = 3;
  auto io = node.io();
  EXPECT_EQ(release_job_gpus(job_42(), io).exit_code, kReleaseOk);
  EXPECT_EQ(node.clock.slept(), std::chrono::milliseconds(600));
}

TEST(GpuRelease, NothingHeldIsNothingToDo) {
  FakeNode node;
  auto io = node.io();
  auto release = release_job_gpus(job_42(), io);
  EXPECT_EQ(release.exit_code, kReleaseOk);
  EXPECT_THAT(node.signals, IsEmpty());
  EXPECT_THAT(node.said, IsEmpty());
}

TEST(GpuRelease, NvmlThatCannotSayIsCouldNotRun) {
  testing::FakeTimekeeper clock;
  GpuReleaseIo io{[]() -> Result<std::vector<GpuProcessUse>> {
                    return fail("Failed to load 'libnvidia-ml.so.1'");
                  },
                  [](unsigned) { return std::optional<HolderProcess>(); },
                  [](unsigned, unsigned long long, int) { return false; }, clock,
                  [](const std::string&) {}};
  auto release = release_job_gpus(job_42(), io);
  EXPECT_EQ(release.exit_code, kReleaseCouldNotRun);
  EXPECT_EQ(release.problem, "gpu-holders-unknown: Failed to load 'libnvidia-ml.so.1'");
}

}  // namespace
}  // namespace gl
