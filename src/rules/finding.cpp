// SPDX-License-Identifier: Apache-2.0
#include "rules/finding.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace gl {

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::error:
      return "error";
    case Severity::warning:
      return "warning";
    case Severity::info:
      return "info";
  }
  return "error";
}

bool has_errors(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& finding) { return finding.severity == Severity::error; });
}

nlohmann::json findings_to_json(const std::vector<Finding>& findings) {
  auto list = nlohmann::json::array();
  for (const auto& finding : findings) {
    auto facts = nlohmann::json::object();
    for (const auto& [name, value] : finding.facts) facts[name] = value;
    list.push_back({{"severity", severity_name(finding.severity)},
                    {"code", finding.code},
                    {"summary", finding.summary},
                    {"rule", finding.rule},
                    {"facts", facts},
                    {"fix", finding.fix}});
  }
  return list;
}

}  // namespace gl
