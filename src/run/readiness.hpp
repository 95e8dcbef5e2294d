// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bridge's decisions, as a pure state machine: engine output lines, health answers and the
// clock go in; sd_notify messages and "give up" come out. bridge.cpp feeds it real events.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/progress.hpp"
#include "supervise/start_phases.hpp"
#include "util/duration.hpp"

namespace gl {

using Clock = std::chrono::steady_clock;

// STATUS= of a headless rank once it has joined (what `status` shows as its phase).
inline constexpr std::string_view kHeadlessJoinedStatus = "headless, joined rank 0";

struct ReadinessConfig {
  Seconds ready_timeout{1200};
  // Progress seen this close to the deadline pushes it back by this much: a load that still
  // advances is not killed.
  Seconds progress_grace{300};
  // A headless rank: ready once it has joined rank 0 (on_rendezvous), not on health.
  bool headless = false;
  // server.ready = "generate": READY=1 only once a generation succeeded after health 200.
  bool ready_on_generation = false;
};

// How big one of the profile's compiling JIT caches is now (run/cache_meter measures it).
struct CacheSize {
  std::string name;  // the catalog/jit_caches row
  std::uint64_t bytes = 0;
};

// STATUS= while health answers 200 and READY=1 waits for the first generation.
inline constexpr std::string_view kWaitingForGenerationStatus = "waiting for a first generation";

// How often `run` probes a serving engine under systemd's watchdog interval `watchdog`: a
// quarter of it, so that with WatchdogSec at least kWatchdogHealthTimeouts probe timeouts
// (plan/launch_plan) one probe may take its whole timeout and fail and the next still feeds
// the watchdog in time. Every 10 s without a watchdog; never more often than every 100 ms.
std::chrono::milliseconds serving_probe_interval(std::optional<std::chrono::microseconds> watchdog);

class Readiness {
 public:
  Readiness(ReadinessConfig config, Clock::time_point started);

  void on_output_line(std::string_view line, Clock::time_point now);
  // The compiling JIT caches' sizes now, measured every few seconds while the engine starts.
  // The first call is the baseline. A cache larger than at the last call is loading progress,
  // like a progress line (first-use JIT builds may print nothing for minutes): STATUS= names
  // it, the deadline is pushed back by the same rule, and where no phase the engine named is
  // in progress the timeline enters jit_compile. No growth and no output: no extension.
  void on_cache_sizes(const std::vector<CacheSize>& sizes, Clock::time_point now);
  // A health answer: HTTP status, or nullopt when the endpoint did not answer at all. Once
  // ready, a 200 feeds the watchdog only where `feed_watchdog` (liveness not failing).
  void on_health(std::optional<int> http_status, Clock::time_point now, bool feed_watchdog = true);
  // With ready_on_generation: whether health said 200 and READY=1 now waits for a generation,
  // and that generation's outcome.
  bool awaiting_generation() const;
  void on_generation(bool generated, Clock::time_point now);
  // A headless rank's probe: whether its engine holds its connection to rank 0. The first
  // `true` is READY=1, every later one feeds the watchdog, as health 200 does for rank 0.
  void on_rendezvous(bool joined, Clock::time_point now);

  bool ready() const { return ready_; }
  Phase phase() const { return phase_; }
  bool deadline_passed(Clock::time_point now) const { return !ready_ && now >= deadline_; }
  Clock::time_point deadline() const { return deadline_; }
  std::string status_text() const;

  // sd_notify lines produced since the last call.
  std::vector<std::string> take_notifications();
  // The start's phase changes since the last call, for `run` to print as phase lines (the first
  // is `process begins`, the last `ready`).
  std::vector<PhaseMark> take_phase_marks();

 private:
  void publish_status();
  void on_answer(bool good);
  // The same decision for a progress line and a growing cache.
  void note_progress(Clock::time_point now);
  void begin_phase(Phase phase);
  void end_phase(Phase phase);

  ReadinessConfig config_;
  Clock::time_point started_;
  Clock::time_point deadline_;
  Phase phase_ = Phase::process;
  std::optional<int> percent_;
  bool ready_ = false;
  bool health_ok_ = false;  // health answered 200 before READY=1 (ready_on_generation)
  std::string last_status_;
  std::vector<std::string> notifications_;
  // The timeline: the phase in progress (none after an engine's "... end" line), and the one a
  // JIT session interrupted (DeepGEMM compiles inside the graph capture), which resumes after it.
  std::optional<Phase> open_phase_ = Phase::process;
  std::optional<Phase> interrupted_;
  std::vector<PhaseMark> marks_{PhaseMark{PhaseMark::Kind::begins, Phase::process}};
  bool have_cache_baseline_ = false;
  std::map<std::string, std::uint64_t> cache_baseline_;
  std::map<std::string, std::uint64_t> cache_last_;
  std::string growth_status_;  // "compiling kernels: flashinfer +12 MiB" until the next line
};

}  // namespace gl
