// SPDX-License-Identifier: Apache-2.0
#include "group/rank_answers.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/core.h>

#include "supervise/group_policy.hpp"

namespace gl {

std::string rank_label(const RankResult& result) {
  return rank_label(result.rank, result.host);
}

std::string rank_failure(const RankResult& result) {
  if (!result.error.empty()) return result.error;
  if (result.exit_code == 255)
    return fmt::format(
        "ssh could not run the command on {} (exit 255): unreachable, refused or "
        "host key not in known_hosts",
        result.host);
  return fmt::format("exit {}", result.exit_code);
}

std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  std::string last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

void print_indented(GroupOutput& output, const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) output.line("    " + line);
}

std::optional<nlohmann::ordered_json> json_answer(const std::string& output) {
  for (size_t at = 0; at < output.size();) {
    const size_t end = output.find('\n', at);
    if (output[at] == '{' || output[at] == '[') {
      std::istringstream rest(output.substr(at));
      nlohmann::ordered_json answer;
      try {
        rest >> answer;
        return answer;
      } catch (const nlohmann::json::exception&) {
        // not this line: a log line that happens to start with a bracket
      }
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

RankAnswers json_from_every_rank(RankRunner& runner,
                                 const std::vector<std::vector<std::string>>& args_per_rank,
                                 const std::vector<int>& answered,
                                 std::chrono::milliseconds timeout) {
  RankAnswers answers;
  for (const auto& result : runner.run(args_per_rank, timeout)) {
    nlohmann::ordered_json entry{{"rank", result.rank}, {"host", result.host}};
    std::optional<nlohmann::ordered_json> answer;
    if (result.error.empty() && std::ranges::find(answered, result.exit_code) != answered.end())
      answer = json_answer(result.output);
    if (!answer) {
      const std::string said = last_line(result.output);
      entry["error"] = said.empty() ? rank_failure(result) : rank_failure(result) + ": " + said;
      answers.all_answered = false;
    } else if (answer->is_object()) {
      for (const auto& [key, value] : answer->items()) entry[key] = value;
    } else {
      entry["answer"] = *answer;
    }
    answers.ranks.push_back(std::move(entry));
  }
  return answers;
}

}  // namespace gl
