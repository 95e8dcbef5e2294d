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
