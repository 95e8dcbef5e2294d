// SPDX-License-Identifier: Apache-2.0
#include "supervise/start_phases.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kT0 = 1'800'000'000'000'000;

PhaseMark begins(StartPhase phase) {
  return {PhaseMark::Kind::begins, phase};
}

TEST(StartPhases, LinesAreSpelledOnceAndReadBack) {
  EXPECT_EQ(phase_line(begins(StartPhase::jit_compile)),
            "gpulaunch: start phase jit_compile begins");
  EXPECT_EQ(phase_line({PhaseMark::Kind::ends, StartPhase::weights}),
            "gpulaunch: start phase weights ends");
  EXPECT_EQ(phase_line({PhaseMark::Kind::ready, StartPhase::health}),
            "gpulaunch: start phase health ends: ready");
  for (auto kind : {PhaseMark::Kind::begins, PhaseMark::Kind::ends, PhaseMark::Kind::ready})
    for (auto phase : {StartPhase::process, StartPhase::weights, StartPhase::jit_compile,
                       StartPhase::torch_compile, StartPhase::cuda_graphs, StartPhase::health}) {
      const PhaseMark mark{kind, phase};
      EXPECT_EQ(parse_phase_line(phase_line(mark)), mark) << phase_line(mark);
    }
}

TEST(StartPhases, OtherLinesAreNoPhaseLines) {
  for (const char* line :
       {"gpulaunch: start phase compiling begins", "gpulaunch: start phase weights",
        "gpulaunch: start phase  weights begins", "start phase weights begins",
        "[TP0] gpulaunch: start phase weights begins", "gpulaunch: start phase weights begins now",
        "gpulaunch: start phase health ready", "Load weight begin. avail mem=138.69 GB", ""})
    EXPECT_FALSE(parse_phase_line(line)) << line;
}

TEST(StartPhases, EachEnginePhaseHasItsTimelinePhase) {
  EXPECT_EQ(start_phase_of(Phase::loading_weights), StartPhase::weights);
  EXPECT_EQ(start_phase_of(Phase::compiling_kernels), StartPhase::jit_compile);
  EXPECT_EQ(start_phase_of(Phase::torch_compiling), StartPhase::torch_compile);
  EXPECT_EQ(start_phase_of(Phase::capturing_graphs), StartPhase::cuda_graphs);
  EXPECT_EQ(start_phase_of(Phase::waiting_for_health), StartPhase::health);
  EXPECT_FALSE(start_phase_of(Phase::serving));
}

// A journal as record-start reads it: engine output between run's phase lines.
TEST(StartPhases, TheTimelineComesFromThePhaseLinesAndTheirTimes) {
  const std::vector<std::string> texts{
      "gpulaunch: started engine, pid 42; waiting for http://127.0.0.1:30000/health",
      phase_line(begins(StartPhase::process)),
      "[2026-12-01 10:00:03 TP0] Load weight begin. avail mem=138.69 GB",
      phase_line(begins(StartPhase::weights)),
      "[2026-12-01 10:01:43 TP0] Load weight end. elapsed=100.02 s, type=LlamaForCausalLM",
      phase_line({PhaseMark::Kind::ends, StartPhase::weights}),
      phase_line(begins(StartPhase::jit_compile)),
      phase_line(begins(StartPhase::cuda_graphs)),
      phase_line(begins(StartPhase::health)),
      phase_line({PhaseMark::Kind::ready, StartPhase::health}),
      "gpulaunch: engine is serving"};
  const std::vector<int64_t> at{0, 0, 3, 3, 103, 103, 110, 225, 247, 250, 250};
  std::vector<TimedLine> lines;
  for (size_t i = 0; i < texts.size(); ++i) lines.push_back({kT0 + at[i] * kSecond, texts[i]});
  const StartTimeline timeline = timeline_from_lines(lines);
  EXPECT_EQ(timeline.process_start_usec, kT0);
  EXPECT_EQ(timeline.ready_usec, kT0 + 250 * kSecond);
  ASSERT_EQ(timeline.phases.size(), 5u);
  EXPECT_EQ(timeline.phases[0].phase, StartPhase::process);
  EXPECT_EQ(timeline.phases[0].end_usec, kT0 + 3 * kSecond);
  EXPECT_EQ(timeline.phases[1].phase, StartPhase::weights);
  EXPECT_EQ(timeline.phases[1].end_usec, kT0 + 103 * kSecond);
  EXPECT_EQ(timeline.phases[2].phase, StartPhase::jit_compile);
  EXPECT_EQ(timeline.phases[2].begin_usec, kT0 + 110 * kSecond);  // 7 s nobody named
  EXPECT_EQ(timeline.phases[4].phase, StartPhase::health);
  EXPECT_EQ(timeline.phases[4].end_usec, kT0 + 250 * kSecond);
  EXPECT_EQ(describe_start(timeline),
            "ready in 4m10s: process 3s, weights 1m40s, jit_compile 1m55s, cuda_graphs 22s, "
            "health 3s");
}

TEST(StartPhases, OnlyTheLastStartOfAnInvocationCountsAndItsSpansAreBounded) {
  std::vector<std::string> texts{phase_line(begins(StartPhase::process)),
                                 phase_line(begins(StartPhase::weights)),
                                 phase_line(begins(StartPhase::process))};
  // A flapping engine: more changes than a start keeps.
  for (size_t i = 0; i < 2 * kMaxStartSpans; ++i)
    texts.push_back(phase_line(begins(i % 2 ? StartPhase::jit_compile : StartPhase::cuda_graphs)));
  std::vector<TimedLine> lines;
  for (size_t i = 0; i < texts.size(); ++i)
    lines.push_back({kT0 + static_cast<int64_t>(i) * kSecond, texts[i]});
  const StartTimeline timeline = timeline_from_lines(lines);
  EXPECT_EQ(timeline.process_start_usec, kT0 + 2 * kSecond);
  EXPECT_EQ(timeline.ready_usec, 0);
  EXPECT_EQ(timeline.phases.size(), kMaxStartSpans);
  EXPECT_EQ(timeline.phases.front().phase, StartPhase::process);
}

TEST(StartPhases, NoProcessLineNoTimeline) {
  const std::string weights = phase_line(begins(StartPhase::weights));
  const StartTimeline timeline = timeline_from_lines({{kT0, weights}});
  EXPECT_EQ(timeline.process_start_usec, 0);
  EXPECT_TRUE(timeline.phases.empty());
}

}  // namespace
}  // namespace gl
