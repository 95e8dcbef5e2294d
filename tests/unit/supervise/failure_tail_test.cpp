// SPDX-License-Identifier: Apache-2.0
#include "supervise/failure_tail.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gl {
namespace {

using ::testing::ElementsAre;

constexpr uint64_t kSecond = 1'000'000;

JournalEntry line(uint64_t second, std::string message) {
  return JournalEntry{second * kSecond, "python3", 42, std::move(message)};
}

// uvicorn's access line (catalog/access_log), as SGLang and vLLM write it for each probe.
std::string probe(int port, std::string_view status) {
  return "INFO:     127.0.0.1:" + std::to_string(port) + " - \"GET /health HTTP/1.1\" " +
         std::string(status);
}

TEST(FailureTail, TheEnginesLinesComeFirstAndTheProbesAreOneLine) {
  std::vector<JournalEntry> entries{
      line(100, "[2026-12-07 10:00:00] Load weight begin"),
      line(101, probe(40001, "503 Service Unavailable")),
      line(102, probe(40002, "503 Service Unavailable")),
      line(103, "RuntimeError: CUDA error: out of memory"),
      line(104, probe(40003, "503 Service Unavailable")),
      line(105, "gpulaunch: the engine did not answer 200 on http://127.0.0.1:8000/health in time"),
  };
  const auto tail = failure_tail(entries, "/health", 15, 107 * kSecond);
  EXPECT_THAT(tail.lines, ElementsAre("[2026-12-07 10:00:00] Load weight begin",
                                      "RuntimeError: CUDA error: out of memory",
                                      "gpulaunch: the engine did not answer 200 on "
                                      "http://127.0.0.1:8000/health in time"));
  EXPECT_EQ(tail.probes, "gpulaunch's /health probe: 3 answers 503, last 3s ago");
}

TEST(FailureTail, EachStatusIsCountedAndTheNewestLinesKept) {
  std::vector<JournalEntry> entries;
  for (uint64_t i = 0; i < 20; ++i) entries.push_back(line(i, "line " + std::to_string(i)));
  entries.push_back(line(20, probe(1, "503 Service Unavailable")));
  entries.push_back(line(21, probe(2, "200 OK")));
  const auto tail = failure_tail(entries, "/health", 3, 21 * kSecond);
  EXPECT_THAT(tail.lines, ElementsAre("line 17", "line 18", "line 19"));
  EXPECT_EQ(tail.probes, "gpulaunch's /health probe: 1 answer 200, 1 answer 503, last 0s ago");
}

TEST(FailureTail, OtherRequestsAndLinesThatOnlyMentionTheHealthPathStay) {
  EXPECT_EQ(probe_answer_status(probe(1, "200 OK"), "/health"), 200);
  EXPECT_FALSE(probe_answer_status(
      "INFO:     127.0.0.1:1 - \"POST /v1/completions HTTP/1.1\" 200 OK", "/health"));
  EXPECT_FALSE(probe_answer_status(
      "INFO:     127.0.0.1:1 - \"GET /health_generate HTTP/1.1\" 200 OK", "/health"));
  EXPECT_FALSE(probe_answer_status("curl http://127.0.0.1:8000/health failed", "/health"));
  const auto tail = failure_tail({line(1, "no probes here")}, "/health", 15, 2 * kSecond);
  EXPECT_THAT(tail.lines, ElementsAre("no probes here"));
  EXPECT_FALSE(tail.probes);
}

TEST(FailureTail, TheHealthPathOfAUrl) {
  EXPECT_EQ(url_path("http://127.0.0.1:8000/health"), "/health");
  EXPECT_EQ(url_path("http://[::1]:8000/v1/models"), "/v1/models");
  EXPECT_EQ(url_path("http://host"), "/");
}

}  // namespace
}  // namespace gl
