// SPDX-License-Identifier: Apache-2.0
#pragma once
// One problem `check` found: how bad, a stable code scripts can match, the facts that
// conflict, the rule they break, and what to change.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gl {

// An error blocks a start, a warning does not; info says what a rule could not judge.
enum class Severity { error, warning, info };

struct Finding {
  Severity severity = Severity::error;
  std::string code;                                        // "flashinfer-nvcc-too-old"
  std::string summary;                                     // one line naming the conflicting values
  std::string rule;                                        // the requirement broken, in words
  std::vector<std::pair<std::string, std::string>> facts;  // name -> value, in reading order
  std::string fix;
};

std::string_view severity_name(Severity severity);
bool has_errors(const std::vector<Finding>& findings);
nlohmann::json findings_to_json(const std::vector<Finding>& findings);

}  // namespace gl
