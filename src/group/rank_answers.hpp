// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading what the ranks answered: a rank's label and why its command failed, in one line; its
// output indented under it; and the JSON document a `--json` command printed among ssh's lines.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "group/group_output.hpp"
#include "group/remote.hpp"

namespace gl {

// "rank 1 (10.0.0.2)"
std::string rank_label(const RankResult& result);

// Why a rank's command did not succeed, in one line.
std::string rank_failure(const RankResult& result);

// The last non-empty line of a rank's output.
std::string last_line(const std::string& text);

// Each line of `text`, indented under the rank's own line.
void print_indented(GroupOutput& output, const std::string& text);

// A rank's `--json` answer. ssh joins its stderr to stdout, so warnings may come before it: the
// document is the first one a line starts, read up to its end (what follows it is ignored).
std::optional<nlohmann::ordered_json> json_answer(const std::string& output);

// Every rank's answer to `args_per_rank` (commands that print JSON), as {"rank", "host", ...}
// with the answer's own members (an object) or under "answer" (anything else), or "error" where
// a rank gave none. `answered` exit codes count as answers (e.g. 1: a refusal, still JSON).
struct RankAnswers {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  bool all_answered = true;
};
RankAnswers json_from_every_rank(RankRunner& runner,
                                 const std::vector<std::vector<std::string>>& args_per_rank,
                                 const std::vector<int>& answered,
                                 std::chrono::milliseconds timeout);

}  // namespace gl
