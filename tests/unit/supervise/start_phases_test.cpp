// SPDX-License-Identifier: Apache-2.0
#include "supervise/start_phases.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kT0 = 1'800'000'000'000'000;

PhaseMark begins(Phase phase) {
  return {PhaseMark::Kind::begins, phase};
}

TEST(StartPhases, LinesAreSpelledOnceAndReadBack) {
  EXPECT_EQ(phase_line(begins(Phase::jit_compile)), "gpulaunch: start phase jit_compile begins");
  EXPECT_EQ(phase_line({PhaseMark::Kind::ends, Phase::weights}),
            "gpulaunch: start phase weights ends");
  EXPECT_EQ(phase_line({PhaseMark::Kind::ready, Phase::health}),
            "gpulaunch: start phase health ends: ready");
  for (auto kind : {PhaseMark::Kind::begins, PhaseMark::Kind::ends, PhaseMark::Kind::ready})
    for (auto phase : {Phase::process, Phase::weights, Phase::jit_compile, Phase::torch_compile,
                       Phase::cuda_graphs, Phase::health}) {
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

// `serving` is no start phase: a journal line naming it is not a phase mark.
TEST(StartPhases, ServingIsNoStartPhase) {
  EXPECT_FALSE(start_phase_from_name("serving"));
  EXPECT_EQ(start_phase_from_name("jit_compile"), Phase::jit_compile);
}

// A journal as record-start reads it: engine output between run's phase lines.
TEST(StartPhases, TheTimelineComesFromThePhaseLinesAndTheirTimes) {
  const std::vector<std::string> texts{
      "gpulaunch: started engine, pid 42; waiting for http://127.0.0.1:30000/health",
      phase_line(begins(Phase::process)),
      "[2026-12-01 10:00:03 TP0] Load weight begin. avail mem=138.69 GB",
      phase_line(begins(Phase::weights)),
      "[2026-12-01 10:01:43 TP0] Load weight end. elapsed=100.02 s, type=LlamaForCausalLM",
      phase_line({PhaseMark::Kind::ends, Phase::weights}),
      phase_line(begins(Phase::jit_compile)),
      phase_line(begins(Phase::cuda_graphs)),
      phase_line(begins(Phase::health)),
      phase_line({PhaseMark::Kind::ready, Phase::health}),
      "gpulaunch: engine is serving"};
  const std::vector<int64_t> at{0, 0, 3, 3, 103, 103, 110, 225, 247, 250, 250};
  std::vector<TimedLine> lines;
  for (size_t i = 0; i < texts.size(); ++i) lines.push_back({kT0 + at[i] * kSecond, texts[i]});
  const StartTimeline timeline = timeline_from_lines(lines);
  EXPECT_EQ(timeline.process_start_usec, kT0);
  EXPECT_EQ(timeline.ready_usec, kT0 + 250 * kSecond);
  ASSERT_EQ(timeline.phases.size(), 5u);
  EXPECT_EQ(timeline.phases[0].phase, Phase::process);
  EXPECT_EQ(timeline.phases[0].end_usec, kT0 + 3 * kSecond);
  EXPECT_EQ(timeline.phases[1].phase, Phase::weights);
  EXPECT_EQ(timeline.phases[1].end_usec, kT0 + 103 * kSecond);
  EXPECT_EQ(timeline.phases[2].phase, Phase::jit_compile);
  EXPECT_EQ(timeline.phases[2].begin_usec, kT0 + 110 * kSecond);  // 7 s nobody named
  EXPECT_EQ(timeline.phases[4].phase, Phase::health);
  EXPECT_EQ(timeline.phases[4].end_usec, kT0 + 250 * kSecond);
  EXPECT_EQ(describe_start(timeline),
            "ready in 4m10s: process 3s, weights 1m40s, jit_compile 1m55s, cuda_graphs 22s, "
            "health 3s");
}

TEST(StartPhases, OnlyTheLastStartOfAnInvocationCountsAndItsSpansAreBounded) {
  std::vector<std::string> texts{phase_line(begins(Phase::process)),
                                 phase_line(begins(Phase::weights)),
                                 phase_line(begins(Phase::process))};
  // A flapping engine: more changes than a start keeps.
  for (size_t i = 0; i < 2 * kMaxStartSpans; ++i)
    texts.push_back(phase_line(begins(i % 2 ? Phase::jit_compile : Phase::cuda_graphs)));
  std::vector<TimedLine> lines;
  for (size_t i = 0; i < texts.size(); ++i)
    lines.push_back({kT0 + static_cast<int64_t>(i) * kSecond, texts[i]});
  const StartTimeline timeline = timeline_from_lines(lines);
  EXPECT_EQ(timeline.process_start_usec, kT0 + 2 * kSecond);
  EXPECT_EQ(timeline.ready_usec, 0);
  EXPECT_EQ(timeline.phases.size(), kMaxStartSpans);
  EXPECT_EQ(timeline.phases.front().phase, Phase::process);
}

TEST(StartPhases, NoProcessLineNoTimeline) {
  const std::string weights = phase_line(begins(Phase::weights));
  const StartTimeline timeline = timeline_from_lines({{kT0, weights}});
  EXPECT_EQ(timeline.process_start_usec, 0);
  EXPECT_TRUE(timeline.phases.empty());
}

}  // namespace
}  // namespace gl
