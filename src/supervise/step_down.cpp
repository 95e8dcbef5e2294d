#include "supervise/step_down.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <fmt/core.h>

namespace gl {
namespace {

struct Knobs {
  std::string_view fraction;  // the GPU memory share the engine takes
  double default_fraction;
  std::string_view concurrency;  // requests in flight
  std::string_view graph_bs;     // largest CUDA graph batch; empty: none
};

std::optional<Knobs> knobs_for(EngineKind kind) {
  switch (kind) {
    case EngineKind::sglang:
      return Knobs{"--mem-fraction-static", 0.88, "--max-running-requests", "--cuda-graph-max-bs"};
    case EngineKind::vllm:
      return Knobs{"--gpu-memory-utilization", 0.9, "--max-num-seqs", ""};
    default:
      return std::nullopt;  // trtllm and commands: no knobs we know how to turn
  }
}

// Index of the value of `flag` ("--flag V" or "--flag=V"); the last one wins, as in argparse.
std::optional<size_t> find_value(const std::vector<std::string>& argv, std::string_view flag) {
  std::optional<size_t> found;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size())
      found = i + 1;
    else if (argv[i].starts_with(flag) && argv[i].size() > flag.size() &&
             argv[i][flag.size()] == '=')
      found = i;
  }
  return found;
}

std::string value_at(const std::vector<std::string>& argv, size_t index, std::string_view flag) {
  const auto& word = argv[index];
  return word.starts_with(std::string(flag) + "=") ? word.substr(flag.size() + 1) : word;
}

void set_value(std::vector<std::string>& argv, std::string_view flag, const std::string& value) {
  if (auto index = find_value(argv, flag)) {
    if (argv[*index].starts_with(std::string(flag) + "="))
      argv[*index] = std::string(flag) + "=" + value;
    else
      argv[*index] = value;
    return;
  }
  argv.emplace_back(flag);
  argv.push_back(value);
}

}  // namespace

int max_gpu_level(EngineKind kind, const StepBounds& bounds) {
  auto knobs = knobs_for(kind);
  if (!knobs) return 0;
  return static_cast<int>(
      std::floor((knobs->default_fraction - bounds.fraction_floor) / bounds.fraction_step + 1e-9));
}

int max_host_level(EngineKind kind, const StepBounds& bounds) {
  if (!knobs_for(kind)) return 0;
  int levels = 0;
  for (long long n = bounds.default_concurrency; n / 2 >= bounds.concurrency_floor; n /= 2)
    ++levels;
  return levels;
}

SteppedArgv step_down(std::vector<std::string> argv, EngineKind kind, int gpu_level, int host_level,
                      const StepBounds& bounds) {
  SteppedArgv out;
  auto knobs = knobs_for(kind);
  if (!knobs || (gpu_level <= 0 && host_level <= 0)) {
    out.argv = std::move(argv);
    return out;
  }
  if (gpu_level > 0) {
    double base = knobs->default_fraction;
    if (auto index = find_value(argv, knobs->fraction))
      base = std::strtod(value_at(argv, *index, knobs->fraction).c_str(), nullptr);
    const double lowered =
        std::max(bounds.fraction_floor, std::min(base, base - bounds.fraction_step * gpu_level));
    const std::string text = fmt::format("{:.2f}", lowered);
    set_value(argv, knobs->fraction, text);
    out.changes.push_back(fmt::format("{} {:.2f} -> {}", knobs->fraction, base, text));
    // A smaller static pool leaves less room for CUDA graphs: halve their batch when set.
    if (!knobs->graph_bs.empty())
      if (auto index = find_value(argv, knobs->graph_bs)) {
        const long long current = std::atoll(value_at(argv, *index, knobs->graph_bs).c_str());
        const long long next = std::max(bounds.graph_bs_floor, current >> std::min(gpu_level, 30));
        set_value(argv, knobs->graph_bs, std::to_string(next));
        out.changes.push_back(fmt::format("{} {} -> {}", knobs->graph_bs, current, next));
      }
  }
  if (host_level > 0) {
    long long current = bounds.default_concurrency;
    if (auto index = find_value(argv, knobs->concurrency))
      current = std::atoll(value_at(argv, *index, knobs->concurrency).c_str());
    const long long next =
        std::max(std::min(current, bounds.concurrency_floor), current >> std::min(host_level, 30));
    set_value(argv, knobs->concurrency, std::to_string(next));
    out.changes.push_back(fmt::format("{} {} -> {}", knobs->concurrency, current, next));
  }
  out.argv = std::move(argv);
  return out;
}

}  // namespace gl
