// SPDX-License-Identifier: Apache-2.0
// The bridge's decisions on a fake I/O and a clock the test moves (tests/fakes/run): what each
// health answer, signal, timer and the engine's end make it do, in microseconds of test time.
// bridge_test.cpp runs the same bridge on the real I/O with a real child.

#include "run/engine_bridge.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/exit_codes.hpp"
#include "fakes/run/fake_bridge_io.hpp"
#include "fakes/systemd/fake_notifier.hpp"

namespace gl {
namespace {

using namespace std::chrono_literals;
using testing::FakeBridgeIo;
using testing::FakeNotifier;
using Signal = FakeBridgeIo::Signal;

constexpr int kExitedWith(int code) {
  return code << 8;  // a wait status: exited with `code`
}
constexpr int kKilledBy(int signal) {
  return signal;  // a wait status: killed by `signal`
}

class EngineBridgeTest : public ::testing::Test {
 protected:
  EngineBridgeTest() {
    options.health_url = "http://127.0.0.1:30000/health";
    options.argv = {"/v/bin/python", "-m", "sglang.launch_server"};
    options.probe_interval = 1000ms;
    options.drain_timeout = 80s;
    options.stop_timeout = 90s;
    options.readiness.ready_timeout = Seconds{600};
    options.liveness.mode = LivenessMode::health;
  }

  EngineBridge& bridge() {
    if (!bridge_)
      bridge_.emplace(
          options, io, notifier, [this](std::string_view line) { lines.emplace_back(line); },
          BridgeLog{});
    return *bridge_;
  }
  bool said(std::string_view text) const {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
      return line.find(text) != std::string::npos;
    });
  }
  bool notified(std::string_view state) const {
    return std::find(notifier.sent.begin(), notifier.sent.end(), state) != notifier.sent.end();
  }
  // Started, and its first probe sent.
  void start() {
    ASSERT_EQ(bridge().start(), std::nullopt);
    io.advance(0ms, bridge());
  }
  void serve() {
    start();
    ASSERT_TRUE(io.answer("/health", 200));
    ASSERT_TRUE(notified("READY=1"));
  }
  // The engine is gone and its output closed: the bridge's status.
  int end(int wait_status) {
    bridge().on_child_exit(io.pid, wait_status);
    bridge().on_output_end();
    EXPECT_TRUE(bridge().finished());
    EXPECT_TRUE(io.stopped);
    return bridge().finish_status();
  }

  BridgeOptions options;
  FakeBridgeIo io;
  FakeNotifier notifier;
  std::vector<std::string> lines;
  std::optional<EngineBridge> bridge_;
};

TEST_F(EngineBridgeTest, ReadyOnlyOnceHealthAnswers200) {
  start();
  EXPECT_EQ(io.spawned, options.argv);
  ASSERT_TRUE(io.answer("/health", 503));
  EXPECT_FALSE(notified("READY=1"));
  // Not ready: the next probe a probe interval later, not sooner.
  io.advance(999ms, bridge());
  EXPECT_EQ(io.waiting("/health"), 0U);
  io.advance(1ms, bridge());
  ASSERT_TRUE(io.answer("/health", std::nullopt));  // no answer in time: not ready either
  EXPECT_FALSE(notified("READY=1"));
  io.advance(1000ms, bridge());
  ASSERT_TRUE(io.answer("/health", 200));
  EXPECT_TRUE(notified("READY=1"));
  EXPECT_TRUE(
      said("gpulaunch: engine is serving: http://127.0.0.1:30000/health answered 200 "
           "after 2.0s"));
}

TEST_F(EngineBridgeTest, AnEngineThatCannotStartIsAConfigurationError) {
  io.spawn_error = "No such file or directory";
  EXPECT_EQ(bridge().start(), kExitConfig);
  EXPECT_TRUE(said("gpulaunch: Failed to start '/v/bin/python': No such file or directory"));
  EXPECT_TRUE(io.timers.empty());
}

TEST_F(EngineBridgeTest, SigtermDrainsTheEngineAloneAndKillsItsGroupAtTheStopTimeout) {
  serve();
  bridge().on_signal(SIGTERM);
  // The engine alone drains (its workers are its business); systemd hears that it stops.
  EXPECT_EQ(io.signals, (std::vector<Signal>{{io.pid, SIGTERM}}));
  EXPECT_TRUE(notified("STOPPING=1"));
  EXPECT_TRUE(notified("STATUS=draining for up to 80s"));
  // A second signal is passed on, but the kill stays where the first put it.
  io.advance(30s, bridge());
  bridge().on_signal(SIGTERM);
  io.advance(59s, bridge());
  EXPECT_FALSE(io.sent({-io.pid, SIGKILL}));
  io.advance(1s, bridge());
  EXPECT_TRUE(io.sent({-io.pid, SIGKILL}));
  EXPECT_TRUE(said("the engine did not stop within 90s of SIGTERM; killing it"));
}

TEST_F(EngineBridgeTest, AnEngineThatDrainsInTimeIsNotKilledAndExitsClean) {
  serve();
  bridge().on_signal(SIGTERM);
  io.advance(5s, bridge());
  EXPECT_EQ(end(kExitedWith(0)), 0);
  // Only the group's clean-up at the end, never the stop timeout's kill.
  EXPECT_FALSE(said("did not stop"));
  EXPECT_TRUE(io.timers.empty());
}

TEST_F(EngineBridgeTest, TheWatchdogKillsTheWholeGroupAtOnce) {
  serve();
  bridge().on_signal(SIGABRT);
  EXPECT_EQ(io.signals, (std::vector<Signal>{{-io.pid, SIGKILL}}));
  EXPECT_TRUE(notified("STATUS=watchdog expired, killing the engine"));
  EXPECT_EQ(end(kKilledBy(SIGKILL)), kExitSignalBase + SIGABRT);
}

TEST_F(EngineBridgeTest, ANeverReadyEngineIsStoppedAtItsDeadlineAndExitsReadyTimeout) {
  options.readiness.ready_timeout = Seconds{10};
  options.readiness.progress_grace = Seconds{0};
  start();
  for (int second = 0; second < 12; ++second) {
    io.answer("/health", 503);
    io.advance(1s, bridge());
  }
  EXPECT_TRUE(io.sent({io.pid, SIGTERM}));
  EXPECT_TRUE(notified("STATUS=ready timeout, stopping the engine"));
  EXPECT_TRUE(said("the engine did not answer 200 on http://127.0.0.1:30000/health in time"));
  // It ignores SIGTERM: 10 s later its group is killed.
  io.advance(10s, bridge());
  EXPECT_TRUE(io.sent({-io.pid, SIGKILL}));
  EXPECT_EQ(end(kKilledBy(SIGKILL)), kExitReadyTimeout);
  EXPECT_FALSE(notified("READY=1"));
}

TEST_F(EngineBridgeTest, WorkersHoldingTheOutputDoNotHoldTheEndLongerThanASecond) {
  serve();
  bridge().on_child_exit(io.pid + 1, kExitedWith(0));  // another child: not the engine
  EXPECT_FALSE(io.timers.contains(BridgeTimer::drain));
  bridge().on_child_exit(io.pid, kExitedWith(1));
  EXPECT_FALSE(bridge().finished());
  io.advance(999ms, bridge());
  EXPECT_FALSE(io.output_closed);
  io.advance(1ms, bridge());
  EXPECT_TRUE(io.output_closed);
  EXPECT_TRUE(bridge().finished());
  // Its workers do not outlive it holding GPU memory.
  EXPECT_TRUE(io.sent({-io.pid, SIGKILL}));
  EXPECT_EQ(bridge().finish_status(), 1);
}

TEST_F(EngineBridgeTest, AStalledEngineDumpsItsStacksThenItsGroupIsKilled) {
  options.liveness = {LivenessMode::generate, 30s, 60s, true, false};
  options.probe_path = "/generate";
  options.probe_body = R"({"text":"x"})";
  options.stall_dump_grace = 5s;
  serve();
  // The first look, an interval after ready, sends a probe; nothing ever answers it, while
  // /health keeps answering 200 (it vouches for nothing).
  io.advance(30s, bridge());
  EXPECT_EQ(io.waiting("/generate"), 1U);
  for (int step = 0; step < 59; ++step) {
    while (io.answer("/health", 200)) {
    }
    io.advance(1s, bridge());
  }
  EXPECT_FALSE(said("no forward progress"));
  io.advance(1s, bridge());
  EXPECT_TRUE(said("gpulaunch: stalled: no forward progress for 90s (signal=generate"))
      << ::testing::PrintToString(lines);
  EXPECT_TRUE(
      notified("STATUS=stalled: no forward progress, dumping stacks and killing the "
               "engine"));
  // A moment for a probe mid-answer, then SIGABRT to every process for its stacks, then the kill.
  io.advance(kStallQuiesce - 1ms, bridge());
  EXPECT_FALSE(io.sent({-io.pid, SIGABRT}));
  io.advance(1ms, bridge());
  EXPECT_TRUE(io.sent({-io.pid, SIGABRT}));
  EXPECT_FALSE(io.sent({-io.pid, SIGKILL}));
  bridge().on_child_exit(io.pid, kKilledBy(SIGABRT));
  EXPECT_FALSE(bridge().finished());  // its workers may still be writing their stacks
  io.advance(5s, bridge());
  EXPECT_TRUE(io.sent({-io.pid, SIGKILL}));
  bridge().on_output_end();
  EXPECT_TRUE(bridge().finished());
  EXPECT_EQ(bridge().finish_status(), kExitStalled);
}

TEST_F(EngineBridgeTest, AHeadlessRankIsReadyOnceItHoldsAConnectionToRankZero) {
  options.rendezvous = Rendezvous{"10.0.0.1", 5000, false};
  options.readiness.headless = true;
  io.resolved = {"10.0.0.1"};
  start();
  EXPECT_TRUE(io.requests.empty());  // nothing answers HTTP on a headless rank
  EXPECT_FALSE(notified("READY=1"));
  io.connected = true;
  io.advance(1s, bridge());
  EXPECT_TRUE(notified("READY=1"));
  EXPECT_TRUE(said("engine joined rank 0: it holds a connection to 10.0.0.1:5000 after 1.0s"));
}

}  // namespace
}  // namespace gl
