// SPDX-License-Identifier: Apache-2.0
#include "supervise/upgrade_gate.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "util/json_file.hpp"
#include "util/terminal_text.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// Characters of an answer shown on either side of where it departs from the record.
constexpr std::size_t kExcerpt = 24;

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto start = text.find_first_not_of(" \t\r\n", at);
    if (start == std::string_view::npos) break;
    auto end = text.find_first_of(" \t\r\n", start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    at = end;
  }
  return out;
}

std::string excerpt(std::string_view text, std::size_t at) {
  const std::size_t from = at > kExcerpt ? at - kExcerpt : 0;
  std::string shown(text.substr(from, 2 * kExcerpt));
  for (char& c : shown)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return fmt::format("{}{}{}", from > 0 ? "..." : "", shown,
                     from + 2 * kExcerpt < text.size() ? "..." : "");
}

std::size_t first_difference(std::string_view a, std::string_view b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<std::size_t>(ia - a.begin());
}

std::string request_body(const GateEndpoint& endpoint, const std::string& prompt, int max_tokens) {
  nlohmann::ordered_json body{{"model", endpoint.model},
                              {"prompt", prompt},
                              {"max_tokens", max_tokens},
                              {"temperature", 0}};
  return body.dump();
}

// choices[0].text and usage.completion_tokens, or nullopt when the answer lacks them.
std::optional<GateAnswer> read_completion(const HttpAnswer& answer) {
  if (!is_2xx(answer.status)) return std::nullopt;
  auto json = parse_bounded_json<nlohmann::json>(answer.body, "completion");
  if (!json || !json->is_object()) return std::nullopt;
  const auto choices = json->find("choices");
  if (choices == json->end() || !choices->is_array() || choices->empty()) return std::nullopt;
  const auto& first = choices->front();
  if (!first.is_object() || !first.contains("text") || !first["text"].is_string())
    return std::nullopt;
  GateAnswer out;
  out.text = first["text"].get<std::string>();
  if (auto usage = json->find("usage"); usage != json->end() && usage->is_object())
    if (auto tokens = usage->find("completion_tokens");
        tokens != usage->end() && tokens->is_number_integer())
      out.tokens = tokens->get<long long>();
  return out;
}

std::string what_failed(const HttpAnswer& answer) {
  if (!answer.status) return "no answer in time";
  if (!is_2xx(answer.status)) return fmt::format("status {}", *answer.status);
  return "an answer without choices[0].text";
}

// Sends every request, each again as soon as it failed (no 2xx, no choices[0].text), up to
// `settings.retries` more times.
struct Batch {
  std::vector<GateAnswer> answers;
  int retried = 0;
};
Result<Batch> send_all(HttpClient& client, Timekeeper& clock, const GateSettings& settings,
                       const std::vector<HttpRequest>& requests,
                       const std::vector<std::string>& prompts, int concurrency,
                       std::chrono::steady_clock::time_point deadline) {
  const HttpRetry retry{settings.retries, [](const HttpAnswer& answer) {
                          return read_completion(answer).has_value();
                        }};
  auto replies = client.exchange_all(requests, concurrency, deadline, retry);
  replies.resize(requests.size());
  Batch batch;
  batch.answers.resize(requests.size());
  std::vector<std::size_t> unanswered;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const HttpReply& reply = replies[i];
    batch.retried += std::max(0, reply.sent - 1);
    if (auto read = read_completion(reply.answer)) {
      read->prompt = prompts[i];
      batch.answers[i] = std::move(*read);
    } else {
      unanswered.push_back(i);
    }
  }
  if (unanswered.empty()) return batch;
  if (clock.steady_now() >= deadline)
    return failf("the gate ran past its {}s bound with {} request(s) unanswered",
                 settings.max_duration.count(), unanswered.size());
  const HttpReply& first = replies[unanswered.front()];
  return failf("the request for prompt '{}' failed {} time(s): {}", prompts[unanswered.front()],
               first.sent, what_failed(first.answer));
}

}  // namespace

SharedPrefix shared_prefix(std::string_view recorded, std::string_view now) {
  const auto a = words(recorded);
  const auto b = words(now);
  SharedPrefix prefix{0, a.size()};
  while (prefix.shared < a.size() && prefix.shared < b.size() &&
         a[prefix.shared] == b[prefix.shared])
    ++prefix.shared;
  return prefix;
}

Result<GateMeasurement> measure_gate(HttpClient& client, Timekeeper& clock,
                                     const GateSettings& settings, const GateEndpoint& endpoint) {
  if (!settings.enabled()) return fail("the profile has no [gate] prompts");
  const auto deadline = clock.steady_now() + settings.max_duration;
  auto request = [&](const std::string& prompt) {
    return HttpRequest{endpoint.path, request_body(endpoint, prompt, settings.max_tokens),
                       endpoint.timeout, endpoint.api_key};
  };
  GateMeasurement measured;
  // The answers: one at a time, so a batch never shapes them.
  std::vector<HttpRequest> asks;
  for (const auto& prompt : settings.prompts) asks.push_back(request(prompt));
  GL_TRY(auto answers, send_all(client, clock, settings, asks, settings.prompts, 1, deadline));
  measured.answers = std::move(answers.answers);
  measured.retried = answers.retried;
  // The load: the prompts in turn, `concurrency` in flight.
  std::vector<HttpRequest> load;
  std::vector<std::string> load_prompts;
  for (int i = 0; i < settings.requests; ++i) {
    const auto& prompt = settings.prompts[static_cast<std::size_t>(i) % settings.prompts.size()];
    load.push_back(request(prompt));
    load_prompts.push_back(prompt);
  }
  const auto started = clock.steady_now();
  GL_TRY(auto loaded,
         send_all(client, clock, settings, load, load_prompts, settings.concurrency, deadline));
  measured.load_time =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.steady_now() - started);
  measured.retried += loaded.retried;
  for (const auto& answer : loaded.answers) measured.load_tokens += answer.tokens;
  const double seconds = std::max(0.001, measured.load_time.count() / 1000.0);
  measured.tokens_per_second = static_cast<double>(measured.load_tokens) / seconds;
  return measured;
}

std::vector<std::string> measurement_lines(const GateMeasurement& measured) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < measured.answers.size(); ++i)
    lines.push_back(fmt::format(
        "prompt {} '{}': {} token(s): \"{}\"", i + 1, terminal_text(measured.answers[i].prompt),
        measured.answers[i].tokens, terminal_text(measured.answers[i].text)));
  lines.push_back(
      fmt::format("throughput: {:.1f} tok/s ({} tokens in {:.1f}s){}", measured.tokens_per_second,
                  measured.load_tokens, measured.load_time.count() / 1000.0,
                  measured.retried > 0 ? fmt::format("; {} request(s) retried", measured.retried)
                                       : std::string()));
  return lines;
}

GateVerdict judge_gate(const GateSettings& settings, const GateRecord& record,
                       const GateMeasurement& now) {
  GateVerdict verdict;
  auto failed = [&](std::string line) {
    verdict.passed = false;
    verdict.failures.push_back(std::move(line));
  };
  for (std::size_t i = 0; i < now.answers.size(); ++i) {
    const GateAnswer& answer = now.answers[i];
    const auto recorded =
        std::find_if(record.measured.answers.begin(), record.measured.answers.end(),
                     [&](const GateAnswer& r) { return r.prompt == answer.prompt; });
    if (recorded == record.measured.answers.end()) {
      failed(
          fmt::format("prompt {} '{}' has no recorded answer: record the gate again "
                      "(`gpulaunch gate record`) after changing [gate] prompts",
                      i + 1, answer.prompt));
      continue;
    }
    if (recorded->text == answer.text) continue;
    const SharedPrefix prefix = shared_prefix(recorded->text, answer.text);
    const double share = prefix.recorded == 0
                             ? (words(answer.text).empty() ? 1.0 : 0.0)
                             : static_cast<double>(prefix.shared) / prefix.recorded;
    // Tolerance below 1: the shared words decide. Exactly 1: the text itself must match.
    if (settings.min_shared_prefix < 1.0 && share >= settings.min_shared_prefix) continue;
    const std::size_t at = first_difference(recorded->text, answer.text);
    failed(fmt::format(
        "prompt {} '{}' differs from the record at character {} (word {}): recorded \"{}\", "
        "now \"{}\"; {} of {} recorded words shared ({:.0f}%, at least {:.0f}% required)",
        i + 1, answer.prompt, at, prefix.shared + 1, excerpt(recorded->text, at),
        excerpt(answer.text, at), prefix.shared, prefix.recorded, share * 100,
        settings.min_shared_prefix * 100));
  }
  const double floor = record.measured.tokens_per_second * settings.min_throughput;
  if (now.tokens_per_second < floor)
    failed(fmt::format(
        "throughput {:.1f} tok/s is below the floor {:.1f} tok/s ({:.0f}% of the "
        "recorded {:.1f} tok/s; {} tokens in {:.1f}s)",
        now.tokens_per_second, floor, settings.min_throughput * 100,
        record.measured.tokens_per_second, now.load_tokens, now.load_time.count() / 1000.0));
  return verdict;
}

nlohmann::ordered_json gate_record_json(const GateRecord& record) {
  auto answers = nlohmann::ordered_json::array();
  for (const auto& answer : record.measured.answers)
    answers.push_back(
        {{"prompt", answer.prompt}, {"text", answer.text}, {"tokens", answer.tokens}});
  return {{"recorded_usec", record.recorded_usec},
          {"engine_version", record.engine_version},
          {"answers", answers},
          {"tokens_per_second", record.measured.tokens_per_second},
          {"load_tokens", record.measured.load_tokens},
          {"load_ms", record.measured.load_time.count()}};
}

Result<GateRecord> read_gate_record(const nlohmann::json& json) {
  if (!json.is_object()) return fail("gate record: not a JSON object");
  const auto answers = json.find("answers");
  if (answers == json.end() || !answers->is_array())
    return fail("gate record: 'answers' is not a list");
  const auto rate = json.find("tokens_per_second");
  if (rate == json.end() || !rate->is_number())
    return fail("gate record: 'tokens_per_second' is not a number");
  GateRecord record;
  for (const auto& entry : *answers) {
    if (!entry.is_object() || !entry.contains("prompt") || !entry["prompt"].is_string() ||
        !entry.contains("text") || !entry["text"].is_string())
      return fail("gate record: an answer lacks its prompt or text");
    record.measured.answers.push_back(GateAnswer{entry["prompt"].get<std::string>(),
                                                 entry["text"].get<std::string>(),
                                                 entry.value("tokens", 0LL)});
  }
  record.measured.tokens_per_second = rate->get<double>();
  record.measured.load_tokens = json.value("load_tokens", 0LL);
  record.measured.load_time = std::chrono::milliseconds(json.value("load_ms", 0LL));
  record.recorded_usec = json.value("recorded_usec", int64_t{0});
  record.engine_version = json.value("engine_version", std::string());
  return record;
}

}  // namespace gl
