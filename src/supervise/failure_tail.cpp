// SPDX-License-Identifier: Apache-2.0
#include "supervise/failure_tail.hpp"

#include <map>

#include <fmt/core.h>

#include "catalog/access_log.hpp"
#include "util/duration.hpp"

namespace gl {

std::optional<int> probe_answer_status(std::string_view line, std::string_view health_path) {
  const std::string request =
      fmt::format("{}{}{}{}", kAccessRequestOpen, kAccessProbeMethod, health_path, kAccessProtocol);
  const auto at = line.find(request);
  if (at == std::string_view::npos) return std::nullopt;
  const auto close = line.find(kAccessStatusOpen, at + request.size());
  if (close == std::string_view::npos) return std::nullopt;
  const auto status = line.substr(close + kAccessStatusOpen.size());
  if (status.size() < 3) return std::nullopt;
  int code = 0;
  for (size_t i = 0; i < 3; ++i) {
    if (status[i] < '0' || status[i] > '9') return std::nullopt;
    code = code * 10 + (status[i] - '0');
  }
  if (status.size() > 3 && status[3] != ' ') return std::nullopt;
  return code;
}

FailureTail failure_tail(const std::vector<JournalEntry>& entries, std::string_view health_path,
                         size_t keep, uint64_t now_usec) {
  FailureTail tail;
  std::map<int, long long> answers;
  uint64_t last_usec = 0;
  for (const auto& entry : entries) {
    if (auto status =
            health_path.empty() ? std::nullopt : probe_answer_status(entry.message, health_path)) {
      ++answers[*status];
      last_usec = std::max(last_usec, entry.realtime_usec);
      continue;
    }
    tail.lines.push_back(entry.message);
  }
  if (tail.lines.size() > keep)
    tail.lines.erase(tail.lines.begin(),
                     tail.lines.begin() + static_cast<std::ptrdiff_t>(tail.lines.size() - keep));
  if (!answers.empty()) {
    std::string counts;
    for (const auto& [status, count] : answers)
      counts += fmt::format("{}{} answer{} {}", counts.empty() ? "" : ", ", count,
                            count == 1 ? "" : "s", status);
    const auto ago = std::chrono::duration_cast<Seconds>(
        std::chrono::microseconds(now_usec > last_usec ? now_usec - last_usec : 0));
    tail.probes = fmt::format("gpulaunch's {} probe: {}, last {} ago", health_path, counts,
                              format_duration(ago));
  }
  return tail;
}

std::string url_path(std::string_view url) {
  const auto scheme = url.find("://");
  const auto slash = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return slash == std::string_view::npos ? std::string("/") : std::string(url.substr(slash));
}

}  // namespace gl
