#include "supervise/exit_status.hpp"

#include <sys/wait.h>

namespace gl {

int exit_status_for_engine(int wait_status, bool saw_usage_error) {
  if (WIFSIGNALED(wait_status)) return kExitSignalBase + WTERMSIG(wait_status);
  if (!WIFEXITED(wait_status)) return kExitSignalBase;
  int code = WEXITSTATUS(wait_status);
  if (code == 2 && saw_usage_error) return kExitConfig;
  return code;
}

bool is_usage_error_line(std::string_view line) {
  return line.find("error: unrecognized arguments") != std::string_view::npos ||
         line.find("error: argument ") != std::string_view::npos ||
         line.find("error: the following arguments are required") != std::string_view::npos;
}

}  // namespace gl
