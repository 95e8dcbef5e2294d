// SPDX-License-Identifier: Apache-2.0
#include "run/readiness.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

using namespace std::chrono_literals;

TEST(Readiness, ReportsProgressAndSaysReadyOnlyOnHealth200) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 1200s, .progress_grace = 300s}, start);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"STATUS=starting"});
  readiness.on_output_line("Loading safetensors checkpoint shards:  50% Completed | 4/8",
                           start + 1s);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"STATUS=loading weights 50%"});
  readiness.on_health(503, start + 2s);
  readiness.on_health(std::nullopt, start + 3s);
  EXPECT_FALSE(readiness.ready());
  EXPECT_TRUE(readiness.take_notifications().empty());
  readiness.on_health(200, start + 4s);
  EXPECT_TRUE(readiness.ready());
  EXPECT_EQ(readiness.take_notifications(),
            (std::vector<std::string>{"STATUS=serving", "READY=1"}));
  readiness.on_health(200, start + 5s);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"WATCHDOG=1"});
  readiness.on_health(503, start + 6s);  // no WATCHDOG=1: systemd restarts a hung engine
  EXPECT_TRUE(readiness.take_notifications().empty());
}

TEST(Readiness, ProgressNearTheDeadlineExtendsItAndSystemdsTimeout) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 600s, .progress_grace = 300s}, start);
  readiness.take_notifications();
  readiness.on_output_line("Loading safetensors checkpoint shards:  10% Completed", start + 60s);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"STATUS=loading weights 10%"});
  readiness.on_output_line("Loading safetensors checkpoint shards:  90% Completed", start + 500s);
  // 100 s were left: the deadline moves to 300 s from now; systemd gets a minute more.
  EXPECT_EQ(
      readiness.take_notifications(),
      (std::vector<std::string>{"EXTEND_TIMEOUT_USEC=360000000", "STATUS=loading weights 90%"}));
  EXPECT_FALSE(readiness.deadline_passed(start + 799s));
  EXPECT_TRUE(readiness.deadline_passed(start + 800s));
}

// A 62-shard load as the bridge reads tqdm's stream: each '\r' update is a line of its own, so
// the update that arrives near the deadline pushes it back then, not a shard later.
TEST(Readiness, EachTqdmUpdateOfALongLoadPushesTheDeadlineBack) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 600s, .progress_grace = 300s}, start);
  readiness.take_notifications();
  // Nine minutes per shard, far longer than the grace: only prompt updates keep it alive.
  const std::string stream =
      "\rMulti-thread loading shards:   0% Completed | 0/62 [00:00<?, ?it/s]"
      "\rMulti-thread loading shards:   2% Completed | 1/62 [09:00<9:09:00, 540.00s/it]"
      "\rMulti-thread loading shards:   3% Completed | 2/62 [18:00<9:00:00, 540.00s/it]";
  std::vector<std::string> updates;
  for (size_t begin = 1, end; begin < stream.size(); begin = end + 1) {
    end = stream.find('\r', begin);
    if (end == std::string::npos) end = stream.size();
    updates.push_back(stream.substr(begin, end - begin));
  }
  ASSERT_EQ(updates.size(), 3u);
  readiness.on_output_line(updates[0], start + 10s);
  readiness.on_output_line(updates[1], start + 550s);  // 50 s before the deadline
  EXPECT_EQ(readiness.take_notifications(),
            (std::vector<std::string>{"STATUS=loading weights 0%", "EXTEND_TIMEOUT_USEC=360000000",
                                      "STATUS=loading weights 2%"}));
  EXPECT_FALSE(readiness.deadline_passed(start + 849s));
  readiness.on_output_line(updates[2], start + 840s);
  EXPECT_FALSE(readiness.deadline_passed(start + 1139s));
  EXPECT_EQ(readiness.status_text(), "loading weights 3%");
}

// The unit's WatchdogSec is at least kWatchdogHealthTimeouts probe timeouts and `run` probes a
// quarter of it apart: two probes in a row that each take the whole timeout (a busy SGLang's
// /health) and a third that answers still feed the watchdog before it fires.
TEST(Readiness, ServingProbesFeedTheWatchdogEvenWhenEachProbeTakesItsWholeTimeout) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  EXPECT_EQ(serving_probe_interval(std::nullopt), milliseconds{10000});
  EXPECT_EQ(serving_probe_interval(microseconds{120'000'000}), milliseconds{30000});
  EXPECT_EQ(serving_probe_interval(microseconds{200'000}), milliseconds{100});

  const milliseconds timeout{23000};  // SGLang: 20 s of its own and the margin
  const auto watchdog = std::chrono::duration_cast<microseconds>(timeout * 5);
  const milliseconds interval = serving_probe_interval(watchdog);
  // Fed at 0; a probe starts `interval` after each answer and answers `timeout` later.
  const milliseconds failed_then_fed = 2 * (interval + timeout);
  EXPECT_LT(failed_then_fed, watchdog);
  const auto start = Clock::now();
  Readiness readiness({}, start);
  readiness.on_health(200, start);
  readiness.take_notifications();
  readiness.on_health(std::nullopt, start + interval + timeout);  // timed out: no feed
  EXPECT_TRUE(readiness.take_notifications().empty());
  readiness.on_health(200, start + failed_then_fed);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"WATCHDOG=1"});
}

TEST(Readiness, NoProgressMeansTheDeadlineHolds) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 10s, .progress_grace = 10s}, start);
  readiness.on_output_line("some unrelated line", start + 9s);
  EXPECT_TRUE(readiness.deadline_passed(start + 10s));
}

}  // namespace
}  // namespace gl

namespace gl {
namespace {

using namespace std::chrono_literals;

TEST(Readiness, AHeadlessRankIsReadyOnceJoinedAndItsWatchdogFedOnlyWhileItHoldsOn) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 600s, .progress_grace = 300s, .headless = true}, start);
  readiness.take_notifications();
  readiness.on_rendezvous(false, start + 1s);  // rank 0 not up yet
  EXPECT_FALSE(readiness.ready());
  EXPECT_TRUE(readiness.take_notifications().empty());
  readiness.on_rendezvous(true, start + 2s);
  EXPECT_TRUE(readiness.ready());
  EXPECT_EQ(readiness.take_notifications(),
            (std::vector<std::string>{"STATUS=headless, joined rank 0", "READY=1"}));
  readiness.on_rendezvous(true, start + 3s);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"WATCHDOG=1"});
  readiness.on_rendezvous(false, start + 4s);  // rank 0 went away: the watchdog runs out
  EXPECT_TRUE(readiness.take_notifications().empty());
  EXPECT_FALSE(readiness.deadline_passed(start + 700s));  // ready: no start deadline any more
}

}  // namespace
}  // namespace gl

namespace gl {
namespace {

using Kind = PhaseMark::Kind;

std::vector<PhaseMark> marks_of(Readiness& readiness) {
  return readiness.take_phase_marks();
}

// SGLang's own lines (model_runner.py 0005834, device_graphs.py 2867a68, compile_utils.py): the
// phases begin and end where it says so; DeepGEMM's JIT inside the capture resumes the capture.
TEST(Readiness, SglangsLinesMarkItsStartPhases) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 1200s, .progress_grace = 300s}, start);
  EXPECT_EQ(marks_of(readiness), (std::vector<PhaseMark>{{Kind::begins, Phase::process}}));
  for (const char* line : {
           "[2026-12-01 10:00:02 TP0] Load weight begin. avail mem=138.69 GB",
           "Multi-thread loading shards:  50% Completed | 2/4 [00:30<00:30,  0.07it/s]",
           "[2026-12-01 10:01:43 TP0] Load weight end. elapsed=100.02 s, type=LlamaForCausalLM, "
           "avail mem=123.52 GB, mem usage=15.17 GB.",
           "[2026-12-01 10:01:44 TP0] Capture cuda graph begin. This can take up to several "
           "minutes. avail mem=30.10 GB",
           "[2026-12-01 10:01:45 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a "
           "long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`.",
           "[2026-12-01 10:09:02 TP0] Capture cuda graph end. Time elapsed: 438.01 s. mem "
           "usage=0.42 GB. avail mem=29.68 GB.",
           "[2026-12-01 10:09:03] INFO:     Application startup complete.",
       })
    readiness.on_output_line(line, start + 1s);
  EXPECT_EQ(marks_of(readiness), (std::vector<PhaseMark>{
                                     {Kind::begins, Phase::weights},
                                     {Kind::ends, Phase::weights},
                                     {Kind::begins, Phase::cuda_graphs},
                                     {Kind::begins, Phase::jit_compile},
                                     {Kind::ends, Phase::jit_compile},
                                     {Kind::begins, Phase::health},
                                 }));
  readiness.on_health(200, start + 2s);
  EXPECT_EQ(marks_of(readiness), (std::vector<PhaseMark>{{Kind::ready, Phase::health}}));
}

// vLLM's (vllm/compilation/monitor.py, backends.py, gpu_model_runner.py): torch.compile is its
// own phase, not the kernels' JIT; FlashInfer before v0.2.6 said when each JIT build finished.
TEST(Readiness, VllmsLinesTellTorchCompileFromJitAndEndEachPhase) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 1200s, .progress_grace = 300s}, start);
  readiness.take_phase_marks();
  for (const char* line : {
           "(EngineCore_DP0 pid=164) INFO 01-23 15:48:50 [gpu_model_runner.py:2602] Starting to "
           "load model /models/m...",
           "(EngineCore_DP0 pid=164) INFO 01-23 15:49:05 [gpu_model_runner.py:2634] Model loading "
           "took 14.2491 GiB memory and 15.046 seconds",
           "(EngineCore_DP0 pid=164) INFO 01-23 15:49:11 [backends.py:559] Dynamo bytecode "
           "transform time: 3.29 s",
           "(EngineCore_DP0 pid=164) INFO 01-23 15:49:22 [backends.py:218] Compiling a graph for "
           "dynamic shape takes 10.00 s",
           "(EngineCore_DP0 pid=164) INFO 01-23 15:49:41 [monitor.py:34] torch.compile takes "
           "13.29 s in total",
           "2025-01-01 10:00:00,000 - INFO - flashinfer.jit: Loading JIT ops: batch_decode",
           "2025-01-01 10:01:00,000 - INFO - flashinfer.jit: Finished loading JIT ops: "
           "batch_decode",
           "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|##########| 11/11",
           "(EngineCore_DP0 pid=212) INFO 10-06 12:00:40 [gpu_model_runner.py:3480] Graph "
           "capturing finished in 8 secs, took 0.31 GiB",
       })
    readiness.on_output_line(line, start + 1s);
  EXPECT_EQ(marks_of(readiness), (std::vector<PhaseMark>{
                                     {Kind::begins, Phase::weights},
                                     {Kind::ends, Phase::weights},
                                     {Kind::begins, Phase::torch_compile},
                                     {Kind::ends, Phase::torch_compile},
                                     {Kind::begins, Phase::jit_compile},
                                     {Kind::ends, Phase::jit_compile},
                                     {Kind::begins, Phase::cuda_graphs},
                                     {Kind::ends, Phase::cuda_graphs},
                                 }));
}

// vLLM #38246: minutes of first-use JIT with no output after the weights. The caches growing
// keeps the start alive and is its jit_compile phase; a start that neither prints nor grows
// hits its deadline.
TEST(Readiness, AGrowingJitCacheIsProgressAndSilenceIsNot) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 600s, .progress_grace = 300s}, start);
  readiness.on_cache_sizes({{"flashinfer", 1000}, {"triton", 0}}, start);  // the baseline
  readiness.on_output_line("[TP0] Load weight end. elapsed=100.02 s, type=LlamaForCausalLM",
                           start + 100s);
  readiness.take_notifications();
  readiness.take_phase_marks();
  // Same sizes: nothing moved.
  readiness.on_cache_sizes({{"flashinfer", 1000}, {"triton", 0}}, start + 500s);
  EXPECT_TRUE(readiness.take_notifications().empty());
  EXPECT_TRUE(readiness.take_phase_marks().empty());
  // 20 MiB more in FlashInfer's workspace, 100 s before the deadline.
  readiness.on_cache_sizes({{"flashinfer", 1000 + 20 * 1024 * 1024}, {"triton", 0}}, start + 505s);
  EXPECT_EQ(readiness.take_notifications(),
            (std::vector<std::string>{"EXTEND_TIMEOUT_USEC=360000000",
                                      "STATUS=compiling kernels: flashinfer +20.0 MiB"}));
  EXPECT_EQ(marks_of(readiness), (std::vector<PhaseMark>{{Kind::begins, Phase::jit_compile}}));
  EXPECT_FALSE(readiness.deadline_passed(start + 804s));
  // Triton grows more than FlashInfer this time: it is the one named.
  readiness.on_cache_sizes({{"flashinfer", 1100 + 20 * 1024 * 1024}, {"triton", 300 * 1024}},
                           start + 700s);
  EXPECT_EQ(readiness.status_text(), "compiling kernels: triton +300.0 KiB");
  EXPECT_TRUE(marks_of(readiness).empty());  // still the same phase
  // Then nothing, and no output: the deadline (pushed to 1000 s at 700 s) stands.
  readiness.on_cache_sizes({{"flashinfer", 1100 + 20 * 1024 * 1024}, {"triton", 300 * 1024}},
                           start + 900s);
  EXPECT_TRUE(readiness.deadline_passed(start + 1000s));
  // The engine's next line ends the growth's status and names its phase.
  readiness.on_output_line("Capture cuda graph begin. This can take up to several minutes.",
                           start + 950s);
  EXPECT_EQ(readiness.status_text(), "capturing CUDA graphs");
  EXPECT_EQ(marks_of(readiness), (std::vector<PhaseMark>{{Kind::begins, Phase::cuda_graphs}}));
}

TEST(Readiness, GrowthInsideAPhaseTheEngineNamedStaysThatPhase) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 600s, .progress_grace = 300s}, start);
  readiness.on_cache_sizes({}, start);
  readiness.on_output_line("Capture cuda graph begin. This can take up to several minutes.",
                           start + 10s);
  readiness.take_phase_marks();
  readiness.on_cache_sizes({{"deep-gemm", 4096}}, start + 15s);  // a cache that was not there
  EXPECT_EQ(readiness.status_text(), "compiling kernels: deep-gemm +4.0 KiB");
  EXPECT_TRUE(marks_of(readiness).empty());
  readiness.on_health(200, start + 20s);
  EXPECT_EQ(marks_of(readiness), (std::vector<PhaseMark>{{Kind::ready, Phase::cuda_graphs}}));
  // Once ready, sizes are no longer looked at.
  readiness.on_cache_sizes({{"deep-gemm", 1 << 30}}, start + 25s);
  EXPECT_EQ(readiness.status_text(), "serving");
}

}  // namespace
}  // namespace gl
