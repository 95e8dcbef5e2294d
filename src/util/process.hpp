#pragma once
// Runs an external program (nvcc, nvidia-smi) and captures what it prints. The one place that
// starts processes, so a hung tool cannot hang gpulaunch: every run has a timeout.

#include <chrono>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace gl {

struct ProcessOutput {
  int exit_code = 0;
  std::string out;  // stdout; stderr is discarded (tools print banners there)
};

// `program` is a path; nothing is looked up on PATH here. Fails when the program cannot be
// started or does not finish within `timeout` (it is then killed).
Result<ProcessOutput> run_process(const std::string& program, const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace gl
