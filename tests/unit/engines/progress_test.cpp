// SPDX-License-Identifier: Apache-2.0
#include "engines/progress.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(Progress, ReadsWeightLoadingPercentagesAsSglangAndVllmPrintThem) {
  auto update = parse_progress_line(
      "Loading safetensors checkpoint shards:  45% Completed | 28/62 [01:02<01:15,  2.1s/it]");
  ASSERT_TRUE(update);
  EXPECT_EQ(update->phase, Phase::loading_weights);
  EXPECT_EQ(update->percent, 45);
  EXPECT_EQ(parse_progress_line("[2026-11-29 TP0] Load weight end. type=DeepseekV3")->percent, 100);
}

// Current SGLang's loader (python/sglang/srt/model_loader/weight_utils.py, v0.5.10): one tqdm
// update, as the bridge hands it over once the carriage return before it is stripped.
TEST(Progress, ReadsCurrentSglangsMultiThreadLoader) {
  auto update = parse_progress_line(
      "Multi-thread loading shards:  25% Completed | 1/4 [00:00<00:02,  1.29it/s]");
  ASSERT_TRUE(update);
  EXPECT_EQ(update->phase, Phase::loading_weights);
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
      Phase::capturing_graphs);
  EXPECT_EQ(parse_progress_line("INFO:     Application startup complete.")->phase,
            Phase::waiting_for_health);
  EXPECT_FALSE(parse_progress_line("INFO: 127.0.0.1 - \"GET /health HTTP/1.1\" 503"));
}

TEST(Progress, ReadsLlamaServersTensorLoading) {
  auto update = parse_progress_line(
      "load_tensors: loading model tensors, this can take a while... (mmap = true)");
  ASSERT_TRUE(update);
  EXPECT_EQ(update->phase, Phase::loading_weights);
  EXPECT_FALSE(update->percent);
}

}  // namespace
}  // namespace gl
