// SPDX-License-Identifier: Apache-2.0
// The bridge with a real engine child, in real time: a tqdm update read while the shard loads, the
// drain and the kill at the stop timeout, a headless rank's connection, liveness against a Python
// engine that wedges. The decisions behind each run on the fake clock in the quick suite
// (tests/unit/run/engine_bridge_test.cpp); these prove the Asio wiring does what they decide.

#include "run/bridge.hpp"

#include "catalog/journal_messages.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/stall_report.hpp"
#include "supervise/start_phases.hpp"
#include "support/bridge_child.hpp"
#include "support/listener.hpp"

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gl {
namespace {

using namespace std::chrono_literals;
using test::RecordingNotifier;
using test::run_engine;

// tqdm's stream as current SGLang's loader writes it (weight_utils.py, "Multi-thread loading
// shards"): each update is "\r" and the bar, and nothing ends it until the next update. The
// bridge reads an update when it arrives, not a shard later, and the journal gets each update
// as a line of its own.
TEST(Bridge, ReadsEachTqdmUpdateWhenItIsWrittenAndJournalsItAsItsOwnLine) {
  auto run = run_engine(
      "printf '\\rMulti-thread loading shards:   0%% Completed | 0/4 [00:00<?, ?it/s]' >&2; "
      "sleep 0.2; "
      "printf '\\rMulti-thread loading shards:  25%% Completed | 1/4 [00:01<00:03,  1.29it/s]' "
      ">&2; sleep 3; printf '\\n' >&2");
  EXPECT_EQ(run.engine_lines,
            (std::vector<std::string>{
                "Multi-thread loading shards:   0% Completed | 0/4 [00:00<?, ?it/s]",
                "Multi-thread loading shards:  25% Completed | 1/4 [00:01<00:03,  1.29it/s]"}));
  auto at =
      std::find(run.notifications.begin(), run.notifications.end(), "STATUS=loading weights 25%");
  ASSERT_NE(at, run.notifications.end());
  // The shard took 3 s more; the update was read while it loaded.
  std::string seen;
  for (size_t i = 0; i < run.notifications.size(); ++i)
    seen +=
        run.notifications[i] + " at " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::milliseconds>(run.notified_after[i]).count()) +
        " ms\n";
  EXPECT_LT(run.notified_after[static_cast<size_t>(at - run.notifications.begin())], 2s) << seen;
}

// A stop (`down`, a restart): systemd's SIGTERM reaches `run`, which passes it to the engine and
// lets it drain. The signal is sent to this process once the engine says "up"; the bridge's
// signal set catches it, as it does in the unit's main process.
struct StopRun {
  int exit_status = -1;
  std::vector<std::string> lines;                       // the engine's and the bridge's own
  std::chrono::steady_clock::duration stopped_after{};  // from the SIGTERM to the bridge's end
};

StopRun stop_engine(const std::string& script, std::chrono::seconds drain,
                    std::chrono::seconds kill_after) {
  BridgeOptions options;
  options.health_url = "http://127.0.0.1:1/health";  // nothing answers: it stays starting
  options.argv = {"/bin/sh", "-c", script};
  options.drain_timeout = drain;
  options.stop_timeout = kill_after;
  RecordingNotifier notifier;
  StopRun run;
  std::chrono::steady_clock::time_point signalled;
  const std::function<void(std::string_view)> print = [&](std::string_view line) {
    run.lines.emplace_back(line);
    if (line == "up") {
      signalled = std::chrono::steady_clock::now();
      ::kill(::getpid(), SIGTERM);
    }
  };
  run.exit_status = run_bridge(options, notifier, print);
  run.stopped_after = std::chrono::steady_clock::now() - signalled;
  return run;
}

TEST(BridgeStop, TheEngineGetsSigtermAndItsDrainTimeToFinish) {
  auto run = stop_engine(
      "trap 'echo draining; sleep 1; echo drained; exit 0' TERM; echo up; "
      "while :; do sleep 0.1; done",
      5s, 15s);
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_THAT(run.lines, ::testing::Contains("draining"));
  EXPECT_THAT(run.lines, ::testing::Contains("drained"));  // not killed mid-drain
  EXPECT_THAT(run.lines, ::testing::Contains(::testing::HasSubstr(
                             "stopping the engine: in-flight requests get 5s to finish")));
  EXPECT_GE(run.stopped_after, 900ms);
  EXPECT_LT(run.stopped_after, 5s);
}

TEST(BridgeStop, AnEngineThatIgnoresSigtermIsKilledAtTheStopTimeout) {
  auto run = stop_engine("trap '' TERM; echo up; while :; do sleep 0.1; done", 1s, 2s);
  EXPECT_EQ(run.exit_status, 0);  // a stop, as systemd asked
  EXPECT_THAT(run.lines, ::testing::Contains(::testing::HasSubstr(
                             "the engine did not stop within 2s of SIGTERM; killing it")));
  EXPECT_GE(run.stopped_after, 1900ms);
  EXPECT_LT(run.stopped_after, 6s);
}

// A headless rank: no health endpoint anywhere; the engine (python3, like vLLM's executor)
// connects to "rank 0" and holds the connection, which is what makes the unit ready.
std::vector<std::string> headless_run(int engine_port, int rendezvous_port) {
  test::Listener rank0;
  BridgeOptions options;
  options.health_url = "http://127.0.0.1:1/health";  // never answers
  options.probe_interval = 100ms;
  options.readiness.headless = true;
  options.rendezvous = Rendezvous{"127.0.0.1", rendezvous_port ? rendezvous_port : rank0.port()};
  const int port = engine_port ? engine_port : rank0.port();
  options.argv = {"/usr/bin/python3", "-c",
                  "import socket, time\n"
                  "s = socket.create_connection(('127.0.0.1', " +
                      std::to_string(port) +
                      "))\n"
                      "time.sleep(1.5)\n"};
  RecordingNotifier notifier;
  const std::function<void(std::string_view)> print = [](std::string_view) {};
  run_bridge(options, notifier, print);
  return notifier.states;
}

TEST(Bridge, AHeadlessRankIsReadyOnceItsEngineHoldsAConnectionToRankZero) {
  auto states = headless_run(0, 0);
  EXPECT_THAT(states, ::testing::Contains("READY=1"));
  EXPECT_THAT(states, ::testing::Contains("STATUS=headless, joined rank 0"));
}

TEST(Bridge, AHeadlessRankConnectedElsewhereIsNotReady) {
  test::Listener elsewhere;
  auto states = headless_run(elsewhere.port(), 0);
  EXPECT_THAT(states, ::testing::Not(::testing::Contains("READY=1")));
}

// A vLLM-like engine in Python: /health always 200; /metrics one request in flight and a
// token counter that moves at each read ("flowing") or never ("wedged"); POST /v1/completions
// hangs ("wedged", "flowing": the probe queues behind the batch) or fails with 503 for its
// first 1.5 s ("ready-late"). "flowing" and "ready-late" end by themselves after a few seconds.
constexpr std::string_view kFakeEngine = R"(
import http.server, os, sys, threading, time
mode, port = sys.argv[1], int(sys.argv[2])
tokens = [1000]
start = time.time()
class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def reply(self, code, body=b''):
        self.send_response(code)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path == '/health':
            return self.reply(200)
        if self.path == '/metrics':
            if mode == 'flowing':
                tokens[0] += 10
            text = ('vllm:num_requests_running{engine="0"} 1.0\n'
                    'vllm:generation_tokens_total{engine="0"} %d.0\n' % tokens[0])
            return self.reply(200, text.encode())
        self.reply(404)
    def do_POST(self):
        self.rfile.read(int(self.headers.get('Content-Length', 0)))
        if mode == 'ready-late' and time.time() - start < 1.5:
            return self.reply(503)
        if mode in ('wedged', 'flowing'):
            time.sleep(3600)
        self.reply(200, b'{"choices": [{"text": "hi"}]}')
if mode != 'wedged':
    threading.Timer(6 if mode == 'flowing' else 3, lambda: os._exit(0)).start()
http.server.ThreadingHTTPServer(('127.0.0.1', port), Handler).serve_forever()
)";

// One of the bridge's own lines as `run` hands it to the log.
struct OwnLine {
  logging::Level level;
  std::string line;
  std::string kind;  // catalog/journal_messages' kind; empty: none
  bool precedes_output = false;
  std::string phase{};  // GPULAUNCH_PHASE=
};

struct LivenessRun {
  int exit_status = -1;
  std::vector<std::string> lines;  // everything printed, the bridge's own lines included
  std::vector<OwnLine> own;        // the bridge's own lines, as logged
  std::vector<std::string> notifications;
  std::chrono::steady_clock::duration ready_after{};
};

LivenessRun run_fake_engine(const std::string& mode, LivenessMode liveness,
                            bool ready_on_generation) {
  int port = 0;
  {
    test::Listener free_port;  // a port nothing holds once it is closed
    port = free_port.port();
  }
  BridgeOptions options;
  options.health_url = "http://127.0.0.1:" + std::to_string(port) + "/health";
  options.probe_interval = 100ms;
  options.stall_dump_grace = 1s;
  options.liveness = {
      .mode = liveness, .interval = 1s, .timeout = 2s, .has_probe = true, .has_metrics = true};
  options.probe_path = "/v1/completions";
  options.probe_body = R"({"prompt":"hi","max_tokens":1})";
  options.metrics_path = "/metrics";
  options.in_flight_metric = "vllm:num_requests_running";
  options.tokens_metric = "vllm:generation_tokens_total";
  options.readiness.ready_on_generation = ready_on_generation;
  // No core from the SIGABRT of a stall (the unit says LimitCORE=0); the dump goes to stderr.
  options.argv = {"/usr/bin/timeout",
                  "30",
                  "/bin/sh",
                  "-c",
                  "ulimit -c 0; PYTHONFAULTHANDLER=1 exec /usr/bin/python3 -c \"$0\" \"$@\"",
                  std::string(kFakeEngine),
                  mode,
                  std::to_string(port)};
  RecordingNotifier notifier;
  LivenessRun run;
  const std::function<void(std::string_view)> print = [&run](std::string_view line) {
    run.lines.emplace_back(line);
  };
  const BridgeLog log = [&run](logging::Level level, std::string_view line,
                               const logging::Fields& fields) {
    run.lines.emplace_back(line);
    run.own.push_back(
        {level, std::string(line), std::string(fields.kind), fields.precedes_output, fields.phase});
  };
  const auto started = std::chrono::steady_clock::now();
  run.exit_status = run_bridge(options, notifier, print, log);
  run.notifications = notifier.states;
  for (size_t i = 0; i < notifier.states.size(); ++i)
    if (notifier.states[i] == "READY=1") run.ready_after = notifier.times[i] - started;
  return run;
}

std::optional<StallReport> stall_in(const std::vector<std::string>& lines) {
  for (const auto& line : lines)
    if (auto report = parse_stall_line(line)) return report;
  return std::nullopt;
}

TEST(BridgeLiveness, AWedgedEngineIsStalledDumpsItsThreadsAndExitsStalled) {
  const LivenessRun run = run_fake_engine("wedged", LivenessMode::generate, false);
  EXPECT_EQ(run.exit_status, kExitStalled);
  auto report = stall_in(run.lines);
  ASSERT_TRUE(report);
  // The probe still queued behind the wedged batch: the metrics saw it first.
  EXPECT_EQ(report->signal, StallSignal::metrics);
  EXPECT_EQ(report->in_flight, 1);
  EXPECT_EQ(report->tokens, 1000.0);
  // Python's faulthandler (PYTHONFAULTHANDLER) wrote every thread's stack after the stall line.
  const auto stall_at = std::find_if(run.lines.begin(), run.lines.end(), [](const auto& line) {
    return parse_stall_line(line).has_value();
  });
  const auto dump_at = std::find(run.lines.begin(), run.lines.end(), "Fatal Python error: Aborted");
  ASSERT_NE(dump_at, run.lines.end());
  EXPECT_LT(stall_at, dump_at);
  EXPECT_THAT(run.lines, ::testing::Contains(::testing::HasSubstr("in do_POST")));
  EXPECT_EQ(parse_run_verdict(run.lines.back()), kExitStalled);
  EXPECT_THAT(run.notifications, ::testing::Contains(::testing::StartsWith("STATUS=stalled")));
  // In the journal: the stall an error with its MESSAGE_ID, written before the dump that follows
  // it; the serving line the "ready" event; the verdict of a failed engine a warning.
  const auto stall = std::find_if(run.own.begin(), run.own.end(), [](const OwnLine& own) {
    return parse_stall_line(own.line).has_value();
  });
  ASSERT_NE(stall, run.own.end());
  EXPECT_EQ(stall->level, logging::Level::error);
  EXPECT_EQ(stall->kind, kStallMessage);
  EXPECT_TRUE(stall->precedes_output);
  EXPECT_THAT(run.own, ::testing::Contains(::testing::Field(&OwnLine::kind, kReadyMessage)));
  ASSERT_FALSE(run.own.empty());
  EXPECT_EQ(parse_run_verdict(run.own.back().line), kExitStalled);
  EXPECT_EQ(run.own.back().level, logging::Level::warning);
  // The engine's own lines never pass through the log.
  EXPECT_THAT(run.own, ::testing::Not(::testing::Contains(
                           ::testing::Field(&OwnLine::line, "Fatal Python error: Aborted"))));
}

TEST(BridgeLiveness, TokensThatKeepFlowingAreNoStallWhileTheProbeWaits) {
  const LivenessRun run = run_fake_engine("flowing", LivenessMode::generate, false);
  EXPECT_FALSE(stall_in(run.lines));
  EXPECT_EQ(run.exit_status, 0);  // the engine ended by itself after 6 s
}

TEST(BridgeLiveness, HealthModeNeverStalls) {
  const LivenessRun run = run_fake_engine("flowing", LivenessMode::health, false);
  EXPECT_FALSE(stall_in(run.lines));
}

// Each start phase change is one of run's own lines, with the phase as GPULAUNCH_PHASE= and the
// phase kind's MESSAGE_ID: `journalctl GPULAUNCH_PHASE=health` finds when each start got there.
TEST(BridgeLiveness, PhaseChangesAreLoggedWithTheirPhase) {
  const LivenessRun run = run_fake_engine("flowing", LivenessMode::health, false);
  std::vector<OwnLine> phases;
  for (const auto& own : run.own)
    if (parse_phase_line(own.line)) phases.push_back(own);
  ASSERT_FALSE(phases.empty());
  for (const auto& own : phases) {
    EXPECT_EQ(own.kind, kPhaseMessage) << own.line;
    EXPECT_EQ(own.level, logging::Level::info) << own.line;
    auto mark = parse_phase_line(own.line);
    EXPECT_EQ(own.phase, start_phase_name(mark->phase)) << own.line;
  }
  EXPECT_EQ(parse_phase_line(phases.back().line)->kind, PhaseMark::Kind::ready);
}

TEST(BridgeLiveness, ReadyGenerateWaitsForTheFirstGeneration) {
  const LivenessRun run = run_fake_engine("ready-late", LivenessMode::health, true);
  auto waiting = std::find(run.notifications.begin(), run.notifications.end(),
                           "STATUS=" + std::string(kWaitingForGenerationStatus));
  auto ready = std::find(run.notifications.begin(), run.notifications.end(), "READY=1");
  ASSERT_NE(waiting, run.notifications.end());
  ASSERT_NE(ready, run.notifications.end());
  EXPECT_LT(waiting, ready);
  EXPECT_GE(run.ready_after, 1500ms);  // /health said 200 at once; the generation came later
}

}  // namespace
}  // namespace gl
