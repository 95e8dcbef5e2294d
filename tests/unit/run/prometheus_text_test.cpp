// SPDX-License-Identifier: Apache-2.0
#include "run/prometheus_text.hpp"

#include <limits>

#include <gtest/gtest.h>

namespace gl {
namespace {

// From SGLang's docs/references/production_metrics.md (sgl-project/sglang 00b08c4), "curl
// http://localhost:30000/metrics", trimmed to the lines around the two we read.
constexpr std::string_view kSglangDocs =
    R"(# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="meta-llama/Llama-3.1-8B-Instruct"} 7.557572e+06
# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE sglang:time_to_first_token_seconds histogram
sglang:time_to_first_token_seconds_sum{model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.3518979474117756e+06
sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 11008.0
# HELP sglang:num_running_reqs The number of running requests
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="meta-llama/Llama-3.1-8B-Instruct"} 162.0
# HELP sglang:num_used_tokens The number of used tokens
# TYPE sglang:num_used_tokens gauge
sglang:num_used_tokens{model_name="meta-llama/Llama-3.1-8B-Instruct"} 123859.0
)";

// SGLang's live token counter: HELP and labels from python/sglang/srt/metrics/collector.py,
// SchedulerMetricsCollector (2026): one series per rank and mode; the values are made up.
constexpr std::string_view kSglangRealtime =
    R"(# HELP sglang:realtime_tokens_total Total number of tokens processed (updated on each log interval). mode: prefill_compute, prefill_cache, decode.
# TYPE sglang:realtime_tokens_total counter
sglang:realtime_tokens_total{dp_rank="0",engine_type="unified",mode="prefill_compute",model_name="glm",tp_rank="0"} 100.0
sglang:realtime_tokens_total{dp_rank="0",engine_type="unified",mode="decode",model_name="glm",tp_rank="0"} 2500.0
sglang:realtime_tokens_total{dp_rank="1",engine_type="unified",mode="decode",model_name="glm",tp_rank="2"} 400.0
sglang:realtime_tokens_created 1.7e+09
)";

// vLLM's names and HELP texts from vllm/v1/metrics/loggers.py, PrometheusStatLogger (2026):
// one series per engine core (data-parallel rank); prometheus_client appends _total to the
// counter. Values made up.
constexpr std::string_view kVllm =
    R"(# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="/models/llama"} 3.0
vllm:num_requests_running{engine="1",model_name="/models/llama"} 2.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="/models/llama"} 7.0
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="/models/llama"} 12000.0
vllm:generation_tokens_total{engine="1",model_name="/models/llama"} 345.0
# HELP vllm:generation_tokens_created Number of generation tokens processed.
# TYPE vllm:generation_tokens_created gauge
vllm:generation_tokens_created{engine="0",model_name="/models/llama"} 1.7e+09
)";

TEST(PrometheusText, ReadsSglangsDocumentedExposition) {
  EXPECT_EQ(prometheus_sum(kSglangDocs, "sglang:num_running_reqs"), 162.0);
  EXPECT_EQ(prometheus_sum(kSglangDocs, "sglang:generation_tokens_total"), 7557572.0);
  // A histogram's _sum is another name, not a sample of the histogram's own.
  EXPECT_EQ(prometheus_sum(kSglangDocs, "sglang:time_to_first_token_seconds"), std::nullopt);
}

TEST(PrometheusText, SumsEveryLabelSet) {
  EXPECT_EQ(prometheus_sum(kSglangRealtime, "sglang:realtime_tokens_total"), 3000.0);
  EXPECT_EQ(prometheus_sum(kVllm, "vllm:num_requests_running"), 5.0);
  EXPECT_EQ(prometheus_sum(kVllm, "vllm:generation_tokens_total"), 12345.0);
}

TEST(PrometheusText, ANameThatIsOnlyAPrefixOfAnotherIsNotRead) {
  // vllm:generation_tokens (the counter without _total) never appears as a sample itself.
  EXPECT_EQ(prometheus_sum(kVllm, "vllm:generation_tokens"), std::nullopt);
  EXPECT_EQ(prometheus_sum(kVllm, "vllm:num_requests"), std::nullopt);
}

TEST(PrometheusText, AbsentMetricIsNulloptNotZero) {
  EXPECT_EQ(prometheus_sum(kVllm, "sglang:num_running_reqs"), std::nullopt);
  EXPECT_EQ(prometheus_sum("", "vllm:num_requests_running"), std::nullopt);
}

TEST(PrometheusText, LabelValuesWithBracesQuotesAndTimestampsAreHandled) {
  constexpr std::string_view text =
      "x{model_name=\"a}b\\\"c\"} 2 1700000000000\r\n"
      "x 3\n"
      "x{broken=\"unterminated} 9\n"
      "x{a=\"b\"} NaN\n"
      "x{a=\"c\"} +Inf\n";
  EXPECT_EQ(prometheus_sum(text.substr(0, text.find("x{broken")), "x"), 5.0);
  EXPECT_EQ(prometheus_sum(text, "x"), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace gl
