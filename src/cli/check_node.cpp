// SPDX-License-Identifier: Apache-2.0
// `gpulaunch check --node`: the node's verdict for a scheduler's prolog, without a profile.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/check_verdict.hpp"
#include "cli/context.hpp"
#include "cli/drain_reason.hpp"
#include "cli/findings_report.hpp"
#include "facts/gather.hpp"
#include "facts/node_health.hpp"
#include "rules/node_verdict.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

// The Xid lines `--acknowledge-xids` set aside: those logged before the time root wrote.
std::optional<uint64_t> xids_acknowledged_before() {
  auto read = read_regular_nofollow(state_paths::xids_acknowledged_file(), 64);
  if (!read || !*read || (*read)->owner != 0) return std::nullopt;
  uint64_t usec = 0;
  const std::string& text = (*read)->content;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), usec);
  if (error != std::errc()) return std::nullopt;
  return usec;
}

Result<void> acknowledge_xids(const Facts& facts) {
  GL_TRY(auto directory, open_root_owned_directory(state_paths::kRuntimeRoot));
  const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const auto file = state_paths::xids_acknowledged_file();
  GL_TRY_VOID(write_atomically_at(directory.get(), file.filename().string(),
                                  std::to_string(now) + "\n", 0644, file.string()));
  fmt::print(stderr, "gpulaunch check --node: {} Xid line(s) of this boot set aside ({})\n",
             facts.node_health.xids.size(), file.string());
  return {};
}

}  // namespace

int check_node(const NodeCheckOptions& options) {
  const std::string& root = options.root;
  const std::string& facts_file = options.facts_file;
  const bool json = options.json;
  if (options.acknowledge_xids && (root != "/" || !facts_file.empty() || ::geteuid() != 0))
    return report(Error{"check --node --acknowledge-xids: only on this host (no --root, no "
                        "--facts), as root"},
                  kCheckCouldNotRun);
  Facts facts;
  std::string node;
  if (!facts_file.empty()) {
    auto loaded = load_facts_file(facts_file);
    if (!loaded) return report(loaded.error(), kCheckCouldNotRun);
    facts = std::move(*loaded);
    node = "facts '" + facts_file + "'";
  } else {
    // A root that cannot be opened as a directory says nothing about a node: not a passing one.
    const UniqueFd directory(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!directory)
      return report(failf("check --node: cannot open the root '{}' as a directory: {}", root,
                          std::strerror(errno))
                        .error(),
                    kCheckCouldNotRun);
    auto request = node_facts_request();
    // Only this host has the journal (Xid lines since boot) and the Fabric Manager's state.
    if (root == "/") request.host = system_host_sources();
    facts = gather_facts(NodeFs(root), request);
    node = root == "/" ? host_name() : "root " + root;
    if (options.acknowledge_xids)
      if (auto written = acknowledge_xids(facts); !written)
        return report(written.error(), kCheckCouldNotRun);
    if (root == "/")
      if (auto before = xids_acknowledged_before())
        std::erase_if(facts.node_health.xids,
                      [&](const XidFact& xid) { return xid.realtime_usec <= *before; });
  }
  const auto findings = evaluate_node(facts);
  const size_t errors = count_of(findings, Severity::error);
  const size_t warnings = count_of(findings, Severity::warning);
  const int exit_code = errors ? kCheckErrors : kCheckOk;
  const std::string verdict = errors ? "fail" : warnings ? "warn" : "pass";
  if (json) {
    auto list = nlohmann::json::array();
    for (const auto& finding : findings) {
      auto seen = nlohmann::json::object();
      for (const auto& [name, value] : finding.facts) seen[name] = value;
      list.push_back({{"code", finding.code},
                      {"severity", severity_name(finding.severity)},
                      {"message", finding.summary},
                      {"fix", finding.fix},
                      {"rule", finding.rule},
                      {"facts", seen}});
    }
    const auto first_error = std::ranges::find(findings, Severity::error, &Finding::severity);
    nlohmann::json out{
        {"node", node},
        {"root", facts_file.empty() ? root : facts.root},
        {"verdict", verdict},
        {"exit_code", exit_code},
        {"errors", errors},
        {"warnings", warnings},
        {"reason", first_error == findings.end()
                       ? std::string()
                       : drain_reason(first_error->code + ": " + first_error->summary)},
        {"findings", list}};
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return exit_code;
  }
  fmt::print("gpulaunch check --node: {}\n", node);
  print_findings(findings);
  fmt::print("\n{}: {} error(s), {} warning(s)\n",
             errors ? "FAILED, jobs placed on this node would fail" : "OK, this node can take jobs",
             errors, warnings);
  return exit_code;
}

}  // namespace gl
