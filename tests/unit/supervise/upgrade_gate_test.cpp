// SPDX-License-Identifier: Apache-2.0
// The upgrade gate on a fake engine and clock: the answers and throughput a record keeps, a
// verdict naming the prompt that differs and where, the throughput against its floor, a
// tolerance of shared words, and a flaky-but-correct engine (a request that fails once and is
// answered when sent again) that passes.

#include "supervise/upgrade_gate.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/util/fake_http_client.hpp"

namespace gl {
namespace {

using testing::FakeHttpClient;
using testing::FakeTimekeeper;

const GateEndpoint kEndpoint{"/v1/completions", "demo", "", std::chrono::seconds{5}};

GateSettings settings() {
  GateSettings gate;
  gate.prompts = {"The capital of France is", "2 + 2 ="};
  gate.max_tokens = 8;
  gate.requests = 8;
  gate.concurrency = 4;
  gate.retries = 2;
  return gate;
}

std::string completion(const std::string& text, long long tokens) {
  return nlohmann::json{{"choices", {{{"index", 0}, {"text", text}}}},
                        {"usage", {{"completion_tokens", tokens}}}}
      .dump();
}

// A correct engine: each prompt's greedy answer, 8 tokens each.
HttpAnswer correct(const HttpRequest& request, int) {
  const auto body = nlohmann::json::parse(request.body);
  const std::string prompt = body["prompt"];
  return {200,
          completion(prompt == "2 + 2 =" ? " 4, and 3 + 3 = 6." : " Paris, a city of light.", 8)};
}

GateRecord record_of(FakeHttpClient& client, FakeTimekeeper& clock) {
  auto measured = measure_gate(client, clock, settings(), kEndpoint);
  EXPECT_TRUE(measured) << measured.error().message;
  return GateRecord{*measured, 0, "0.5.6"};
}

TEST(UpgradeGate, SendsGreedyBoundedRequestsWithTheKeyAndMeasuresTheLoad) {
  FakeTimekeeper clock;
  FakeHttpClient client(clock, correct);
  auto endpoint = kEndpoint;
  endpoint.api_key = "secret";
  auto measured = measure_gate(client, clock, settings(), endpoint);
  ASSERT_TRUE(measured) << measured.error().message;
  ASSERT_EQ(measured->answers.size(), 2u);
  EXPECT_EQ(measured->answers[0].text, " Paris, a city of light.");
  EXPECT_EQ(measured->load_tokens, 64);
  // 8 requests, 4 in flight, 100 ms each: 200 ms for 64 tokens.
  EXPECT_DOUBLE_EQ(measured->tokens_per_second, 320.0);
  ASSERT_EQ(client.seen.size(), 10u);
  const auto body = nlohmann::json::parse(client.seen.front().body);
  EXPECT_EQ(body["temperature"], 0);
  EXPECT_EQ(body["max_tokens"], 8);
  EXPECT_EQ(body["model"], "demo");
  EXPECT_EQ(client.seen.front().api_key, "secret");
  EXPECT_EQ(client.seen.front().target, "/v1/completions");
  EXPECT_EQ(client.max_concurrency, 4);
}

TEST(UpgradeGate, TheSameEnginePasses) {
  FakeTimekeeper clock;
  FakeHttpClient recording(clock, correct);
  const GateRecord record = record_of(recording, clock);
  FakeHttpClient again(clock, correct);
  auto now = measure_gate(again, clock, settings(), kEndpoint);
  ASSERT_TRUE(now);
  const GateVerdict verdict = judge_gate(settings(), record, *now);
  EXPECT_TRUE(verdict.passed) << verdict.failures.front();
}

TEST(UpgradeGate, GibberishNamesThePromptAndWhereItDeparts) {
  FakeTimekeeper clock;
  FakeHttpClient recording(clock, correct);
  const GateRecord record = record_of(recording, clock);
  FakeHttpClient gibberish(clock, [](const HttpRequest& request, int index) {
    const auto body = nlohmann::json::parse(request.body);
    if (body["prompt"] == "2 + 2 =") return correct(request, index);
    return HttpAnswer{200, completion(" Paris, zxq vor blen!", 8)};
  });
  auto now = measure_gate(gibberish, clock, settings(), kEndpoint);
  ASSERT_TRUE(now);
  const GateVerdict verdict = judge_gate(settings(), record, *now);
  ASSERT_FALSE(verdict.passed);
  ASSERT_EQ(verdict.failures.size(), 1u);
  EXPECT_EQ(verdict.failures[0],
            "prompt 1 'The capital of France is' differs from the record at character 8 (word "
            "2): recorded \" Paris, a city of light.\", now \" Paris, zxq vor blen!\"; 1 of 5 "
            "recorded words shared (20%, at least 100% required)");
}

TEST(UpgradeGate, ASharedPrefixToleranceAcceptsALateDivergenceAndNotAnEarlyOne) {
  GateSettings tolerant = settings();
  tolerant.min_shared_prefix = 0.6;
  GateRecord record;
  record.measured.answers = {{"The capital of France is", " Paris, a city of light.", 8},
                             {"2 + 2 =", " 4", 1}};
  record.measured.tokens_per_second = 100;
  GateMeasurement late = record.measured;
  late.answers[0].text = " Paris, a city of lights and";  // 4 of 5 words shared
  EXPECT_TRUE(judge_gate(tolerant, record, late).passed);
  GateMeasurement early = record.measured;
  early.answers[0].text = " Paris, the capital";  // 1 of 5
  const auto verdict = judge_gate(tolerant, record, early);
  ASSERT_FALSE(verdict.passed);
  EXPECT_NE(verdict.failures[0].find("1 of 5 recorded words shared (20%, at least 60% required)"),
            std::string::npos)
      << verdict.failures[0];
}

TEST(UpgradeGate, AFiveTimesSlowerEngineFallsBelowTheFloor) {
  FakeTimekeeper clock;
  FakeHttpClient recording(clock, correct);
  const GateRecord record = record_of(recording, clock);
  FakeHttpClient slow(clock, correct);
  slow.per_request = std::chrono::milliseconds{500};
  auto now = measure_gate(slow, clock, settings(), kEndpoint);
  ASSERT_TRUE(now);
  const GateVerdict verdict = judge_gate(settings(), record, *now);
  ASSERT_FALSE(verdict.passed);
  EXPECT_EQ(verdict.failures.back(),
            "throughput 64.0 tok/s is below the floor 160.0 tok/s (50% of the recorded 320.0 "
            "tok/s; 64 tokens in 1.0s)");
}

TEST(UpgradeGate, AFlakyButCorrectEngineIsRetriedWithinTheBoundAndPasses) {
  FakeTimekeeper clock;
  FakeHttpClient recording(clock, correct);
  const GateRecord record = record_of(recording, clock);
  // Every third request fails once (a 503, or no answer), then succeeds when sent again.
  FakeHttpClient flaky(clock, [](const HttpRequest& request, int index) {
    if (index % 3 == 0) return index % 2 == 0 ? HttpAnswer{503, "busy"} : HttpAnswer{};
    return correct(request, index);
  });
  auto now = measure_gate(flaky, clock, settings(), kEndpoint);
  ASSERT_TRUE(now) << now.error().message;
  EXPECT_GT(now->retried, 0);
  const GateVerdict verdict = judge_gate(settings(), record, *now);
  EXPECT_TRUE(verdict.passed) << verdict.failures.front();
}

TEST(UpgradeGate, ARequestThatKeepsFailingIsAnErrorNamingIt) {
  FakeTimekeeper clock;
  FakeHttpClient broken(clock, [](const HttpRequest&, int) { return HttpAnswer{500, "oops"}; });
  auto now = measure_gate(broken, clock, settings(), kEndpoint);
  ASSERT_FALSE(now);
  EXPECT_EQ(now.error().message,
            "the request for prompt 'The capital of France is' failed 3 time(s): status 500");
  EXPECT_EQ(broken.seen.size(), 6u);  // both prompts, 1 + 2 tries each, then no load
}

TEST(UpgradeGate, TheBoundStopsTheGate) {
  FakeTimekeeper clock;
  FakeHttpClient hung(clock, [](const HttpRequest&, int) { return HttpAnswer{}; });
  hung.per_request = std::chrono::seconds{61};
  auto now = measure_gate(hung, clock, settings(), kEndpoint);
  ASSERT_FALSE(now);
  EXPECT_EQ(now.error().message, "the gate ran past its 60s bound with 2 request(s) unanswered");
}

TEST(UpgradeGate, ARecordReadsBackAsWritten) {
  GateRecord record;
  record.measured.answers = {{"p", " text\n", 3}};
  record.measured.tokens_per_second = 1234.5;
  record.measured.load_tokens = 64;
  record.measured.load_time = std::chrono::milliseconds{52};
  record.recorded_usec = 42;
  record.engine_version = "0.18.0";
  auto back = read_gate_record(nlohmann::json::parse(gate_record_json(record).dump()));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->measured.answers[0].text, " text\n");
  EXPECT_EQ(back->measured.tokens_per_second, 1234.5);
  EXPECT_EQ(back->engine_version, "0.18.0");
  EXPECT_FALSE(read_gate_record(nlohmann::json::parse(R"({"answers": 3})")));
}

}  // namespace
}  // namespace gl
