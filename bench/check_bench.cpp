// `gpulaunch check` on a healthy fixture node against the manual route an operator takes:
// python3 -c "import torch; print(torch.version.cuda)", nvcc --version, nvidia-smi.
// Run through bench/run.sh, which puts the fake NVML on LD_LIBRARY_PATH.

#include <cstdlib>
#include <filesystem>

#include <benchmark/benchmark.h>

#include "facts/gather.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "scenarios/scenario.hpp"
#include "util/process.hpp"

namespace {

struct Healthy {
  gl::test::FixtureNode node;
  std::string profile_path;
  Healthy() {
    profile_path = gl::test::build_scenario(gl::test::scenario_named("healthy-blackwell-cuda-13"),
                                            node, 30000);
  }
};

Healthy& healthy() {
  static Healthy fixture;
  return fixture;
}

void run_or_skip(benchmark::State& state, const std::string& program,
                 const std::vector<std::string>& args) {
  auto result = gl::run_process(program, args, std::chrono::seconds(60));
  if (!result)
    state.SkipWithError(result.error().message.c_str());
  else
    benchmark::DoNotOptimize(result->out);
}

// The library call `up` makes: gather (fake NVML, two nvcc runs) + evaluate.
void BM_CheckLibrary(benchmark::State& state) {
  auto& fixture = healthy();
  auto profile = gl::load_profile(gl::DirectorySource({}), fixture.profile_path);
  gl::ShellEnvironment shell{{{"PATH", "/usr/local/bin:/usr/bin:/bin"}}};
  for (auto _ : state) {
    auto request = gl::facts_request(*profile, shell);
    request.probe_ports = false;
    auto facts = gl::gather_facts(gl::NodeFs(fixture.node.root()), request);
    auto findings = gl::evaluate(*profile, facts, shell);
    if (gl::has_errors(findings)) state.SkipWithError("healthy fixture reported errors");
  }
}
BENCHMARK(BM_CheckLibrary)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

// The whole command as an operator runs it: process start, profile load, probes, report.
void BM_CheckCommand(benchmark::State& state) {
  auto& fixture = healthy();
  for (auto _ : state)
    run_or_skip(state, GPULAUNCH_BIN,
                {"check", fixture.profile_path, "--root", fixture.node.root().string()});
}
BENCHMARK(BM_CheckCommand)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

void BM_ManualTorchImport(benchmark::State& state) {
  for (auto _ : state)
    run_or_skip(state, "/usr/bin/python3", {"-c", "import torch; print(torch.version.cuda)"});
}
BENCHMARK(BM_ManualTorchImport)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

// The floor of any Python route: interpreter start plus a stdlib import.
void BM_ManualPythonFloor(benchmark::State& state) {
  for (auto _ : state) run_or_skip(state, "/usr/bin/python3", {"-c", "import json"});
}
BENCHMARK(BM_ManualPythonFloor)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

void BM_ManualNvccVersion(benchmark::State& state) {
  const std::string nvcc = std::filesystem::exists("/usr/local/cuda/bin/nvcc")
                               ? "/usr/local/cuda/bin/nvcc"
                               : (healthy().node.root() / "usr/local/cuda-13.0/bin/nvcc").string();
  for (auto _ : state) run_or_skip(state, nvcc, {"--version"});
}
BENCHMARK(BM_ManualNvccVersion)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

// No driver here: the fixture's nvidia-smi script stands in (a real one takes 50-500 ms).
void BM_ManualNvidiaSmi(benchmark::State& state) {
  gl::test::FixtureNode node;
  node.nvidia_smi({{8, 12, 0}}, "580.95.05", "13.0");
  const std::string smi = (node.root() / "usr/bin/nvidia-smi").string();
  for (auto _ : state) run_or_skip(state, smi, {});
}
BENCHMARK(BM_ManualNvidiaSmi)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
