// SPDX-License-Identifier: Apache-2.0
#include "run/iteration_stats.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

// The example answer of `curl http://HOST:PORT/metrics` in TensorRT-LLM's
// docs/source/commands/trtllm-serve.rst (NVIDIA/TensorRT-LLM 000d771), with the elided objects
// ("...") left out and a second iteration added as the executor would record it.
constexpr std::string_view kTrtllmDocs = R"([
    {
        "gpuMemUsage": 56401920000,
        "inflightBatchingStats": {},
        "iter": 1,
        "iterLatencyMS": 16.505143404006958,
        "kvCacheStats": {},
        "newActiveRequestsQueueLatencyMS": 0.0007503032684326172
    },
    {
        "gpuMemUsage": 56401920000,
        "iter": 2,
        "iterLatencyMS": 16.1,
        "numActiveRequests": 1
    }
])";

TEST(IterationStats, TheHighestIterationOfTheList) {
  const IterationReading reading = read_iteration_stats(kTrtllmDocs, "iter");
  EXPECT_TRUE(reading.parsed);
  EXPECT_EQ(reading.last_iteration, 2);
}

TEST(IterationStats, AnEmptyListIsNoReadingOfTheCounter) {
  // get_iteration_stats answers [] when no iteration ran since the last read: an idle engine,
  // or one that stands still. Neither moves the counter.
  const IterationReading reading = read_iteration_stats("[]", "iter");
  EXPECT_TRUE(reading.parsed);
  EXPECT_FALSE(reading.last_iteration);
}

TEST(IterationStats, EntriesAsJsonTextAreReadToo) {
  const IterationReading reading = read_iteration_stats(
      R"(["{\"iter\": 41, \"numActiveRequests\": 3}", "{\"iter\": 42}"])", "iter");
  EXPECT_EQ(reading.last_iteration, 42);
}

TEST(IterationStats, AnythingButAListIsNotParsed) {
  for (std::string_view body : {"", "{\"iter\": 3}", "vllm:num_requests_running 1", "[1,"}) {
    const IterationReading reading = read_iteration_stats(body, "iter");
    EXPECT_FALSE(reading.parsed) << body;
    EXPECT_FALSE(reading.last_iteration) << body;
  }
}

TEST(IterationStats, EntriesWithoutANumberedIterationAreSkipped) {
  const IterationReading reading = read_iteration_stats(
      R"([{"iter": "7"}, 5, null, {"iterLatencyMS": 3}, {"iter": 6}])", "iter");
  EXPECT_EQ(reading.last_iteration, 6);
}

}  // namespace
}  // namespace gl
