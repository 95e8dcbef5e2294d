// SPDX-License-Identifier: Apache-2.0
#include "cli/findings_report.hpp"
#include "cli/colour.hpp"
#include "util/terminal_text.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace gl {
namespace {

void print_group(const std::vector<Finding>& findings, Severity severity, std::string_view title) {
  size_t count = std::count_if(findings.begin(), findings.end(), [&](const Finding& finding) {
    return finding.severity == severity;
  });
  if (count == 0) return;
  const Tone tone = severity == Severity::error     ? Tone::error
                    : severity == Severity::warning ? Tone::warning
                                                    : Tone::none;
  fmt::print("\n{} ({})\n", paint(title, tone), count);
  for (const auto& finding : findings) {
    if (finding.severity != severity) continue;
    // Findings quote paths and names from the node (a venv, a model directory): escaped.
    fmt::print("  {}[{}] {}\n", paint(severity_name(severity), tone), finding.code,
               terminal_text(finding.summary));
    fmt::print("    rule: {}\n", finding.rule);
    for (const auto& [name, value] : finding.facts)
      fmt::print("    {}: {}\n", name, terminal_text(value));
    fmt::print("    fix: {}\n", terminal_text(finding.fix));
  }
}

}  // namespace

void print_findings(const std::vector<Finding>& findings) {
  print_group(findings, Severity::error, "ERRORS");
  print_group(findings, Severity::warning, "WARNINGS");
  print_group(findings, Severity::info, "NOT JUDGED");
}

}  // namespace gl
