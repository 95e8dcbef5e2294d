// SPDX-License-Identifier: Apache-2.0
#include "supervise/exit_status.hpp"

#include <sys/wait.h>

#include <charconv>

#include "catalog/oom_signatures.hpp"

namespace gl {
namespace {

constexpr std::string_view kExiting = "exiting with ";

}  // namespace

std::optional<int> terminating_signal(int wait_status) {
  if (!WIFSIGNALED(wait_status)) return std::nullopt;
  return WTERMSIG(wait_status);
}

std::optional<int> exit_code_of(int wait_status) {
  if (!WIFEXITED(wait_status)) return std::nullopt;
  return WEXITSTATUS(wait_status);
}

int exit_status_for_engine(int wait_status, bool saw_usage_error) {
  if (WIFSIGNALED(wait_status)) return kExitSignalBase + WTERMSIG(wait_status);
  if (!WIFEXITED(wait_status)) return kExitSignalBase;
  int code = WEXITSTATUS(wait_status);
  // argparse exits 2; an engine refusing its configuration (vLLM's ValueError) exits 1.
  if (code != 0 && saw_usage_error) return kExitConfig;
  if (is_verdict_status(code)) return kExitEngineCrash;
  return code;
}

bool is_usage_error_line(std::string_view line) {
  return line.find("error: unrecognized arguments") != std::string_view::npos ||
         line.find("error: argument ") != std::string_view::npos ||
         line.find("error: the following arguments are required") != std::string_view::npos ||
         config_error_fix(line).has_value();
}

std::optional<std::string_view> config_error_fix(std::string_view line) {
  for (const ConfigErrorSignature& error : engine_config_errors())
    if (line.find(error.text) != std::string_view::npos) return error.fix;
  return std::nullopt;
}

std::string run_verdict_line(std::string_view why, int status) {
  std::string line(kRunLinePrefix);
  if (!why.empty()) line.append(why).append("; ");
  return line.append(kExiting).append(std::to_string(status));
}

std::optional<int> parse_run_verdict(std::string_view line) {
  if (!line.starts_with(kRunLinePrefix)) return std::nullopt;
  line.remove_prefix(kRunLinePrefix.size());
  const auto at = line.rfind(kExiting);
  if (at == std::string_view::npos || (at != 0 && (at < 2 || line.substr(at - 2, 2) != "; ")))
    return std::nullopt;
  const std::string_view number = line.substr(at + kExiting.size());
  int status = 0;
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), status);
  if (error != std::errc{} || end != number.data() + number.size() || number.empty())
    return std::nullopt;
  return status;
}

}  // namespace gl
