// SPDX-License-Identifier: Apache-2.0
#include "engines/progress.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(Progress, ReadsWeightLoadingPercentagesAsSglangAndVllmPrintThem) {
  auto update = parse_progress_line(
      "Loading safetensors checkpoint shards:  45% Completed | 28/62 [01:02<01:15,  2.1s/it]");
  ASSERT_TRUE(update);
  EXPECT_EQ(update->phase, Phase::weights);
  EXPECT_EQ(update->percent, 45);
  EXPECT_EQ(parse_progress_line("[2026-11-29 TP0] Load weight end. type=DeepseekV3")->percent, 100);
}

// Current SGLang's loader (python/sglang/srt/model_loader/weight_utils.py, v0.5.10): one tqdm
// update, as the bridge hands it over once the carriage return before it is stripped.
TEST(Progress, ReadsCurrentSglangsMultiThreadLoader) {
  auto update = parse_progress_line(
      "Multi-thread loading shards:  25% Completed | 1/4 [00:00<00:02,  1.29it/s]");
  ASSERT_TRUE(update);
  EXPECT_EQ(update->phase, Phase::weights);
  EXPECT_EQ(update->percent, 25);
  EXPECT_EQ(
      parse_progress_line("Multi-thread loading shards:   0% Completed | 0/62 [00:00<?, ?it/s]")
          ->percent,
      0);
  EXPECT_EQ(parse_progress_line(
                "Multi-thread loading shards: 100% Completed | 62/62 [09:41<00:00,  9.38s/it]")
                ->percent,
            100);
}

TEST(Progress, KnowsTheLaterPhases) {
  EXPECT_EQ(
      parse_progress_line("[TP0] Capture cuda graph begin. This can take up to several minutes.")
          ->phase,
      Phase::cuda_graphs);
  EXPECT_EQ(parse_progress_line("INFO:     Application startup complete.")->phase, Phase::health);
  EXPECT_FALSE(parse_progress_line("INFO: 127.0.0.1 - \"GET /health HTTP/1.1\" 503"));
}

// The lines that end a phase, as the engines print them (catalog/engines.cpp names the files).
TEST(Progress, KnowsWhereEachPhaseEnds) {
  auto weights = parse_progress_line(
      "[2026-12-01 10:01:43 TP0] Load weight end. elapsed=100.02 s, type=LlamaForCausalLM, "
      "avail mem=123.52 GB, mem usage=15.17 GB.");
  ASSERT_TRUE(weights);
  EXPECT_TRUE(weights->ends);
  EXPECT_EQ(weights->phase, Phase::weights);
  EXPECT_FALSE(parse_progress_line("[TP0] Load weight begin. avail mem=138.69 GB")->ends);
  for (const char* line :
       {"[2026-12-01 10:09:02 TP0] Capture cuda graph end. Time elapsed: 438.01 s. mem "
        "usage=0.42 GB. avail mem=29.68 GB.",
        "[2026-08-17 16:52:18] Capture target decode CUDA graph end. elapsed=2.58 s, mem "
        "usage=0.45 GB, avail mem=72.65 GB.",
        "(EngineCore_DP0 pid=212) INFO 10-06 12:00:40 [gpu_model_runner.py:3480] Graph capturing "
        "finished in 8 secs, took 0.31 GiB"}) {
    auto update = parse_progress_line(line);
    ASSERT_TRUE(update) << line;
    EXPECT_EQ(update->phase, Phase::cuda_graphs) << line;
    EXPECT_TRUE(update->ends) << line;
  }
  auto newer = parse_progress_line(
      "[2026-08-17 16:52:13] Capture target decode CUDA graph begin. backend=full, "
      "num_tokens_per_req=1, bs=[1, 2], avail mem=73.10 GB");
  ASSERT_TRUE(newer);
  EXPECT_EQ(newer->phase, Phase::cuda_graphs);
  EXPECT_FALSE(newer->ends);
  for (const char* line : {"INFO 10-14 22:48:36 [gpu_model_runner.py:2653] Loading weights took "
                           "12.68 seconds",
                           "INFO 11-06 10:51:24 [gpu_model_runner.py:3012] Model loading took "
                           "14.2491 GiB and 25.774743 seconds"}) {
    auto update = parse_progress_line(line);
    ASSERT_TRUE(update) << line;
    EXPECT_EQ(update->phase, Phase::weights) << line;
    EXPECT_TRUE(update->ends) << line;
    EXPECT_EQ(update->percent, 100) << line;
  }
}

TEST(Progress, TellsTorchCompileFromKernelJit) {
  auto compile = parse_progress_line(
      "(EngineCore_DP0 pid=164) INFO 01-23 15:49:22 [backends.py:218] Compiling a graph for "
      "dynamic shape takes 10.00 s");
  ASSERT_TRUE(compile);
  EXPECT_EQ(compile->phase, Phase::torch_compile);
  EXPECT_FALSE(compile->ends);
  auto done = parse_progress_line(
      "(EngineCore_DP0 pid=164) INFO 01-23 15:49:41 [monitor.py:34] torch.compile takes 13.29 s "
      "in total");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->phase, Phase::torch_compile);
  EXPECT_TRUE(done->ends);
  auto deep_gemm = parse_progress_line(
      "[2026-12-01 10:01:45 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long "
      "time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`.");
  ASSERT_TRUE(deep_gemm);
  EXPECT_EQ(deep_gemm->phase, Phase::jit_compile);
  EXPECT_EQ(phase_name(Phase::jit_compile), "compiling kernels");
  EXPECT_EQ(phase_name(Phase::torch_compile), "torch.compile");
}

TEST(Progress, ReadsLlamaServersTensorLoading) {
  auto update = parse_progress_line(
      "load_tensors: loading model tensors, this can take a while... (mmap = true)");
  ASSERT_TRUE(update);
  EXPECT_EQ(update->phase, Phase::weights);
  EXPECT_FALSE(update->percent);
}

}  // namespace
}  // namespace gl
