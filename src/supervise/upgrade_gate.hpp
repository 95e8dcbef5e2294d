// SPDX-License-Identifier: Apache-2.0
#pragma once
// The upgrade gate (issue 32): a ready engine must still answer the profile's fixed greedy
// prompts as it did when the gate was recorded, and as fast, within the profile's tolerance.
// measure_gate() asks the engine through HttpClient (the same client, key and timeout as
// liveness), retrying a failed request within the bound; judge_gate() compares a measurement with
// the record and says which prompt differs and how, or the throughput against the floor.
// Both are pure of printing; cli/ says the verdict and rolls back.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/gate_settings.hpp"
#include "util/error.hpp"
#include "util/http_client.hpp"
#include "util/timekeeper.hpp"

namespace gl {

struct GateAnswer {
  std::string prompt;
  std::string text;
  long long tokens = 0;  // usage.completion_tokens
};

struct GateMeasurement {
  std::vector<GateAnswer> answers;  // one per prompt, in the profile's order
  double tokens_per_second = 0;     // over the load
  long long load_tokens = 0;
  std::chrono::milliseconds load_time{0};
  int retried = 0;  // sendings beyond each request's first (a request that failed, sent again)
};

// What `gate record` keeps (root-owned, in the state directory) and `lock` copies.
struct GateRecord {
  GateMeasurement measured;
  int64_t recorded_usec = 0;
  std::string engine_version;  // for messages: what the record was made on
};

nlohmann::ordered_json gate_record_json(const GateRecord& record);
// An error names what is missing ("gate record: 'answers' is not a list").
Result<GateRecord> read_gate_record(const nlohmann::json& json);

// Where and how to ask the engine.
struct GateEndpoint {
  std::string path;   // catalog/completion_api
  std::string model;  // the served name
  std::string api_key;
  std::chrono::milliseconds timeout{60'000};  // one request
};

// The prompts' answers (one at a time), then the load (settings.requests completions with
// settings.concurrency in flight). A request that fails (no 2xx, or an answer without
// choices[0].text) is sent again up to settings.retries times; one that still fails is an error
// naming it, as is running past settings.max_duration.
Result<GateMeasurement> measure_gate(HttpClient& client, Timekeeper& clock,
                                     const GateSettings& settings, const GateEndpoint& endpoint);

// What `gate record`, `gate check` and `lock` print of a measurement, a line each: the engine's
// answers (and the prompts beside them) escaped for root's terminal (util/terminal_text), so an
// answer holding OSC 52 or CSI 2J shows as text instead of setting the clipboard or clearing it.
std::vector<std::string> measurement_lines(const GateMeasurement& measured);

struct GateVerdict {
  bool passed = true;
  // One line per failure: "prompt 2 'Paris is' differs from the record at word 4 (...)",
  // "throughput 812.0 tok/s is below the floor 2500.0 tok/s (...)".
  std::vector<std::string> failures;
};

GateVerdict judge_gate(const GateSettings& settings, const GateRecord& record,
                       const GateMeasurement& now);

// The number of leading words two answers share, and the recorded answer's word count.
struct SharedPrefix {
  std::size_t shared = 0;
  std::size_t recorded = 0;
};
SharedPrefix shared_prefix(std::string_view recorded, std::string_view now);

}  // namespace gl
