// SPDX-License-Identifier: Apache-2.0
// Which cache a crash's traceback poisoned, if any: the frame lines as CPython prints them
// (Lib/traceback.py, StackSummary.format_frame_summary, 3.12: `  File "{}", line {}, in {}`),
// the caches gpulaunch may move aside, and the stop before.

#include "supervise/quarantine.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

const std::vector<CachePlace> kPlaces{
    {"inductor", "/var/cache/gpulaunch/demo/torchinductor"},
    {"vllm", "/var/cache/gpulaunch/demo/vllm"},
    {"sglang", "/var/cache/gpulaunch/demo/sglang"},
    {"sglang-jit", "/var/cache/gpulaunch/demo/sglang/jit"},
};

// vLLM #24915's shape: the crash runs through a module torch.compile's cache generated.
std::vector<std::string> traceback_through(const std::string& path) {
  return {
      "Traceback (most recent call last):",
      "  File \"/opt/venv/lib/python3.12/site-packages/torch/_inductor/codecache.py\", line 1215, "
      "in _load_graph",
      "    graph.current_callable = PyCodeCache.load_by_key_path(key, path)",
      "  File \"" + path + "\", line 41, in <module>",
      "    triton_poi_fused_0 = async_compile.triton('triton_poi_fused_0', '''",
      "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
  };
}

TEST(QuarantineDecision, ParsesAFrameLineAsCPythonPrintsIt) {
  auto frame = parse_traceback_frame(
      "  File \"/var/cache/gpulaunch/demo/torchinductor/fx/ab/cab.py\", line 41, in call");
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->path, "/var/cache/gpulaunch/demo/torchinductor/fx/ab/cab.py");
  EXPECT_EQ(frame->line, 41);
  EXPECT_EQ(frame->function, "call");
  EXPECT_EQ(frame->text,
            "File \"/var/cache/gpulaunch/demo/torchinductor/fx/ab/cab.py\", line 41, in call");
  // Not frames: the source line below it, a relative path, a frame with no line number.
  EXPECT_FALSE(parse_traceback_frame("    return self.run(*args)"));
  EXPECT_FALSE(parse_traceback_frame("  File \"<string>\", line 1, in <module>"));
  EXPECT_FALSE(parse_traceback_frame("  File \"/a/b.py\", line , in f"));
  EXPECT_FALSE(parse_traceback_frame("  File \"/a/b.py\", line 3"));
}

TEST(QuarantineDecision, AFrameInsideACacheQuarantinesThatCache) {
  auto found = decide_quarantine(
      traceback_through("/var/cache/gpulaunch/demo/torchinductor/fxgraph/xy/cxy.py"), kPlaces,
      nullptr);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->cache.name, "inductor");
  EXPECT_EQ(found->frame.line, 41);
}

TEST(QuarantineDecision, ATracebackOnlyThroughTheVenvOrASiblingNameQuarantinesNothing) {
  EXPECT_FALSE(decide_quarantine(traceback_through("/opt/venv/lib/python3.12/site-packages/x.py"),
                                 kPlaces, nullptr));
  // `torchinductor2` is not inside `torchinductor`; `..` climbs out of it.
  EXPECT_FALSE(decide_quarantine(traceback_through("/var/cache/gpulaunch/demo/torchinductor2/a.py"),
                                 kPlaces, nullptr));
  EXPECT_FALSE(
      decide_quarantine(traceback_through("/var/cache/gpulaunch/demo/torchinductor/../vllmx/a.py"),
                        kPlaces, nullptr));
  EXPECT_FALSE(decide_quarantine({"engine: serving", "RuntimeError: boom"}, kPlaces, nullptr));
  EXPECT_FALSE(decide_quarantine(
      traceback_through("/var/cache/gpulaunch/demo/torchinductor/fx/a.py"), {}, nullptr));
}

TEST(QuarantineDecision, TheDeepestCacheAndTheInnermostFrameWin) {
  auto nested = decide_quarantine(traceback_through("/var/cache/gpulaunch/demo/sglang/jit/k.py"),
                                  kPlaces, nullptr);
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->cache.name, "sglang-jit");

  std::vector<std::string> two = traceback_through("/var/cache/gpulaunch/demo/vllm/a.py");
  two.push_back("  File \"/var/cache/gpulaunch/demo/torchinductor/b.py\", line 7, in inner");
  auto inner = decide_quarantine(two, kPlaces, nullptr);
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->cache.name, "inductor");
  EXPECT_EQ(inner->frame.function, "inner");
}

TEST(QuarantineDecision, TheStopRightAfterAQuarantineCountsAsUsual) {
  const auto lines = traceback_through("/var/cache/gpulaunch/demo/torchinductor/fxgraph/xy/cxy.py");
  auto first = decide_quarantine(lines, kPlaces, nullptr);
  ASSERT_TRUE(first);
  const SupervisorEvent quarantined = quarantine_event(
      *first, "/var/cache/gpulaunch/demo/torchinductor.quarantined-20261201T204500",
      "restart at once", 1, 0, 0);
  // Rebuilt and crashed through it again: no second quarantine in a row.
  EXPECT_FALSE(decide_quarantine(lines, kPlaces, &quarantined));
  // Nor another cache right after it: an engine naming each cache in turn would otherwise never
  // spend its crash-loop budget. After any other stop, the cache is quarantined.
  EXPECT_FALSE(decide_quarantine(traceback_through("/var/cache/gpulaunch/demo/vllm/x.py"), kPlaces,
                                 &quarantined));
  const SupervisorEvent crash{2, "crash", "exit status 1", "restart after 10s"};
  EXPECT_TRUE(decide_quarantine(lines, kPlaces, &crash));
}

TEST(QuarantineDecision, ThePreviousStopSkipsEventsThatOnlyReport) {
  const std::vector<SupervisorEvent> events{
      {1, "crash", "e", "a"},
      {2, std::string(kCacheQuarantinedEventKind), "e", "a"},
      {3, "started", "ready in 2m", ""},
      {4, "stable", "served 10m", "none"},
  };
  const SupervisorEvent* previous = previous_stop_event(events);
  ASSERT_NE(previous, nullptr);
  EXPECT_EQ(previous->time_usec, 2);
  EXPECT_EQ(previous_stop_event({}), nullptr);
}

TEST(QuarantineDecision, TheEventNamesTheFrameAndTheCopy) {
  auto found = decide_quarantine(
      traceback_through("/var/cache/gpulaunch/demo/torchinductor/fxgraph/xy/cxy.py"), kPlaces,
      nullptr);
  ASSERT_TRUE(found);
  const SupervisorEvent event = quarantine_event(
      *found, "/var/cache/gpulaunch/demo/torchinductor.quarantined-20261201T204500",
      "restart at once", 5, 1, 0);
  EXPECT_EQ(event.kind, "cache-quarantined");
  EXPECT_EQ(event.evidence,
            "traceback runs through cache 'inductor': File "
            "\"/var/cache/gpulaunch/demo/torchinductor/fxgraph/xy/cxy.py\", line 41, in <module>");
  EXPECT_EQ(event.action,
            "moved /var/cache/gpulaunch/demo/torchinductor to "
            "/var/cache/gpulaunch/demo/torchinductor.quarantined-20261201T204500 (kept for "
            "inspection); restart at once");
  EXPECT_EQ(event.gpu_level, 1);
}

}  // namespace
}  // namespace gl
