// SPDX-License-Identifier: Apache-2.0
// A rank's answer to another rank's failure: restart with the group, stop with it, or nothing
// (already restarted, not running); the same classification folds into the same history.

#include "supervise/group_policy.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

constexpr int64_t kFailedAt = 1'000'000'000;
constexpr int64_t kNow = kFailedAt + 500'000;

RestartSettings settings() {
  RestartSettings restart;
  restart.delay = Seconds{10};
  restart.max_delay = Seconds{300};
  restart.budget = 3;
  return restart;
}

PeerFailure failure(ExitClass value, std::string evidence = "engine was killed by signal KILL") {
  return PeerFailure{"k26-ar", 1, "10.0.0.2",
                     Classification{value, std::move(evidence), std::nullopt}, kFailedAt};
}

// Serving since well before the failure: part of the broken group.
LocalRank serving() {
  return LocalRank{"active", 4242, kFailedAt - 600'000'000};
}

PeerDecision decide(const SupervisorState& state, const PeerFailure& peer, const LocalRank& local,
                    const RestartSettings& restart = settings()) {
  return after_peer_failure(state, peer, local, restart, kNow, 4, 4);
}

TEST(GroupPolicy, APeerCrashRestartsThisRankAndCountsAsOneFailure) {
  auto decision = decide(SupervisorState{}, failure(ExitClass::crash), serving());
  EXPECT_EQ(decision.response, PeerResponse::restart);
  EXPECT_EQ(decision.outcome.state.consecutive_failures, 1);
  EXPECT_EQ(decision.outcome.state.last_class, "crash");
  EXPECT_EQ(decision.outcome.state.last_failure_usec, kNow);
  EXPECT_EQ(decision.outcome.action, "restart with the group: restart after 10s");
}

TEST(GroupPolicy, EveryRankStepsDownTheSameWayAsTheRankThatRanOutOfMemory) {
  SupervisorState state;
  state.consecutive_failures = 1;
  state.gpu_level = 1;
  const auto peer = failure(ExitClass::cuda_oom, "torch.OutOfMemoryError: CUDA out of memory.");
  auto here = decide(state, peer, serving());
  auto there = after_stop(state, peer.stop, settings(), kNow, 4, 4);
  EXPECT_EQ(here.response, PeerResponse::restart);
  EXPECT_EQ(here.outcome.state.gpu_level, there.state.gpu_level);
  EXPECT_EQ(here.outcome.state.gpu_level, 2);
  EXPECT_EQ(here.outcome.state.consecutive_failures, there.state.consecutive_failures);
  EXPECT_EQ(here.outcome.action,
            "restart with the group: restart after 20s; step down to GPU memory level 2");
}

TEST(GroupPolicy, TheKnobTheMessageNamedIsTurnedOnEveryRank) {
  auto peer = failure(ExitClass::cuda_oom, "RuntimeError: alloc_req_slots runs out of memory.");
  peer.stop.knob = MemoryKnob::max_requests;
  auto decision = decide(SupervisorState{}, peer, serving());
  EXPECT_EQ(decision.outcome.state.host_level, 1);
  EXPECT_EQ(decision.outcome.state.gpu_level, 0);
}

TEST(GroupPolicy, HostOomStepsConcurrencyOnEveryRank) {
  auto decision = decide(SupervisorState{}, failure(ExitClass::host_oom), serving());
  EXPECT_EQ(decision.response, PeerResponse::restart);
  EXPECT_EQ(decision.outcome.state.host_level, 1);
}

TEST(GroupPolicy, ARankStartedAfterTheFailureJoinsTheNewGroupUncounted) {
  SupervisorState state;
  state.consecutive_failures = 1;
  LocalRank restarted{"activating", 5151, static_cast<uint64_t>(kFailedAt + 2'000'000)};
  auto decision = decide(state, failure(ExitClass::crash), restarted);
  EXPECT_EQ(decision.response, PeerResponse::none);
  EXPECT_EQ(decision.outcome.state.consecutive_failures, 1);
  EXPECT_EQ(decision.outcome.action,
            "none: this rank started again after rank 1 (10.0.0.2) failed; it joins the new group");
}

TEST(GroupPolicy, ARankBetweenProcessesIsAlreadyRestarting) {
  LocalRank between{"activating", 0, static_cast<uint64_t>(kFailedAt - 5'000'000)};
  auto decision = decide(SupervisorState{}, failure(ExitClass::crash), between);
  EXPECT_EQ(decision.response, PeerResponse::none);
  EXPECT_EQ(decision.outcome.state.consecutive_failures, 0);
}

TEST(GroupPolicy, AStoppedOrFailedRankIsLeftAlone) {
  for (const char* state : {"inactive", "failed", ""}) {
    auto decision = decide(SupervisorState{}, failure(ExitClass::crash), LocalRank{state, 0, 0});
    EXPECT_EQ(decision.response, PeerResponse::none) << state;
    EXPECT_EQ(decision.outcome.state.consecutive_failures, 0) << state;
  }
  auto decision = decide(SupervisorState{}, failure(ExitClass::crash), LocalRank{"inactive", 0, 0});
  EXPECT_EQ(decision.outcome.action,
            "none: this rank is inactive, nothing to take down with rank 1 (10.0.0.2)");
}

TEST(GroupPolicy, APeerThatStaysDownStopsTheGroup) {
  for (ExitClass value : {ExitClass::config_error, ExitClass::setup_failure, ExitClass::budget}) {
    auto decision = decide(SupervisorState{}, failure(value), serving());
    EXPECT_EQ(decision.response, PeerResponse::stop) << exit_class_name(value);
    EXPECT_EQ(decision.outcome.state.consecutive_failures, 0) << exit_class_name(value);
    EXPECT_EQ(decision.outcome.action,
              "stop: the group cannot serve while rank 1 (10.0.0.2) stays down (`gpulaunch "
              "restart k26-ar --all-nodes` once it is fixed)");
  }
}

TEST(GroupPolicy, TheSharedBudgetRunsOutOnEveryRankAtOnce) {
  SupervisorState state;
  state.consecutive_failures = 2;
  auto decision = decide(state, failure(ExitClass::crash), serving());
  // Restarted anyway: `run` then refuses with the crash-loop status, as on a single node.
  EXPECT_EQ(decision.response, PeerResponse::restart);
  EXPECT_EQ(decision.outcome.state.consecutive_failures, 3);
  EXPECT_EQ(decision.outcome.action,
            "restart with the group: stay down: crash-loop budget of 3 failures spent");
}

TEST(GroupPolicy, RestartPolicyNoStopsInsteadOfRestarting) {
  auto restart = settings();
  restart.policy = "no";
  auto decision = decide(SupervisorState{}, failure(ExitClass::crash), serving(), restart);
  EXPECT_EQ(decision.response, PeerResponse::stop);
  EXPECT_EQ(decision.outcome.state.consecutive_failures, 1);
}

TEST(GroupPolicy, OnlyFailuresAndStopsThatStayDownReachTheGroup) {
  EXPECT_FALSE(group_must_know(ExitClass::clean));
  for (ExitClass value : {ExitClass::crash, ExitClass::host_oom, ExitClass::cuda_oom,
                          ExitClass::hang, ExitClass::start_timeout, ExitClass::residue,
                          ExitClass::config_error, ExitClass::setup_failure, ExitClass::budget})
    EXPECT_TRUE(group_must_know(value)) << exit_class_name(value);
}

TEST(GroupPolicy, ACleanStopBetweenFailuresKeepsTheFailureToBackOffFrom) {
  SupervisorState state;
  state.consecutive_failures = 1;
  state.last_class = "host-oom";
  auto outcome =
      after_stop(state, Classification{ExitClass::clean, "", std::nullopt}, settings(), kNow, 4, 4);
  EXPECT_EQ(outcome.state.last_class, "host-oom");
  EXPECT_EQ(outcome.state.consecutive_failures, 1);
}

// peer-failed's whole record: a rank that served restart.stable_after is forgiven first, as
// its own record-exit would have done, and both events land in its history, oldest first.
TEST(GroupPolicy, ARankThatServedLongEnoughIsForgivenBeforeThePeersFailureCounts) {
  SupervisorState state;
  state.consecutive_failures = 2;
  state.gpu_level = 1;
  RestartSettings restart = settings();
  restart.stable_after = Seconds{600};
  const InvocationTimes times{kFailedAt - 700'000'000, kFailedAt - 650'000'000, 0};
  const PeerRecord record =
      decide_peer_record(state, failure(ExitClass::crash), serving(), times, restart, kNow, 4, 4);
  EXPECT_EQ(record.decision.response, PeerResponse::restart);
  EXPECT_TRUE(record.save);
  ASSERT_EQ(record.events.size(), 2U);
  EXPECT_EQ(record.events[0].kind, "stable");
  EXPECT_EQ(record.events[0].evidence, "served 10min 50s (restart.stable_after 10min)");
  EXPECT_EQ(record.events[1].kind, "crash");
  EXPECT_EQ(record.events[1].evidence, "rank 1 (10.0.0.2): engine was killed by signal KILL");
  // Forgiven one level and its failures, then the peer's crash counts as the first again.
  EXPECT_EQ(record.decision.outcome.state.consecutive_failures, 1);
  EXPECT_EQ(record.decision.outcome.state.gpu_level, 0);
}

TEST(GroupPolicy, ARankThatDoesNotRespondRecordsThePeersFailureAndKeepsItsState) {
  const PeerRecord record =
      decide_peer_record(SupervisorState{}, failure(ExitClass::crash), LocalRank{"inactive", 0, 0},
                         InvocationTimes{}, settings(), kNow, 4, 4);
  EXPECT_EQ(record.decision.response, PeerResponse::none);
  EXPECT_FALSE(record.save);
  ASSERT_EQ(record.events.size(), 1U);
  EXPECT_EQ(record.events[0].kind, "crash");
}

// The notifier's clock may run ahead: a failure "from the future" is taken as heard now.
TEST(GroupPolicy, AFailureStampedAfterNowIsTakenAsHappeningNow) {
  PeerFailure ahead = failure(ExitClass::crash);
  ahead.time_usec = kNow + 60'000'000;
  const PeerRecord record = decide_peer_record(SupervisorState{}, ahead, serving(),
                                               InvocationTimes{}, settings(), kNow, 4, 4);
  EXPECT_EQ(record.decision.response, PeerResponse::restart);
}

// Issue 44: a rank that served past restart.probation when another rank died does not count
// the death toward the budget (the failing rank, started with it, served as long); one that
// never became ready counts it, as the failing rank does.
TEST(GroupPolicy, APeersDeathAfterTheGroupServedIsNotCountedTowardTheBudget) {
  SupervisorState state;
  state.consecutive_failures = 2;  // two failed starts: the budget (3) has one left
  // Ready 7 minutes before: past the probation (5min), short of stable_after (10min).
  const InvocationTimes times{kFailedAt - 480'000'000, kFailedAt - 420'000'000, 0};
  const PeerRecord served = decide_peer_record(state, failure(ExitClass::crash), serving(), times,
                                               settings(), kNow, 4, 4);
  EXPECT_EQ(served.decision.response, PeerResponse::restart);
  EXPECT_EQ(served.decision.outcome.state.consecutive_failures, 3);
  EXPECT_EQ(failed_starts(served.decision.outcome.state), 0);
  EXPECT_EQ(served.decision.outcome.action,
            "restart with the group: restart after 40s (after serving 7min: not counted toward "
            "the crash-loop budget; 3 failure(s) in a row); keeps dying: 3 failures in a row "
            "(restart.budget 3), 1 after serving");
  // Still loading when the peer died: a failed start on this rank too.
  const PeerRecord loading = decide_peer_record(
      state, failure(ExitClass::crash), LocalRank{"activating", 4242, kFailedAt - 60'000'000},
      InvocationTimes{kFailedAt - 60'000'000, 0, 0}, settings(), kNow, 4, 4);
  EXPECT_EQ(loading.decision.outcome.action,
            "restart with the group: stay down: crash-loop budget of 3 failures spent");
}

}  // namespace
}  // namespace gl
