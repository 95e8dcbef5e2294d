// SPDX-License-Identifier: Apache-2.0
// `gpulaunch check` on a healthy fixture node against the manual route an operator takes:
// python3 -c "import torch; print(torch.version.cuda)", nvcc --version, nvidia-smi.
// Run through bench/run.sh, which puts the fake NVML on LD_LIBRARY_PATH. Each benchmark reports
// `children`: the processes gpulaunch's code started per check (util/process counts every start);
// bench/run.sh also counts the whole command's forks and execs with strace.

#include <sys/resource.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include <benchmark/benchmark.h>

#include "facts/gather.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "rules/node_verdict.hpp"
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

double children_cpu_ms() {
  struct rusage usage {};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  auto ms = [](const struct timeval& time) { return time.tv_sec * 1e3 + time.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// Page faults of the children so far: the count that does not move with the machine's load. On a
// VM each fault costs 20-40 us, so mapping and relocating shared libraries is most of a short
// command's time (bench/README.md, where check's time goes).
double children_faults() {
  struct rusage usage {};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_minflt + usage.ru_majflt);
}

void run_or_skip(benchmark::State& state, const std::string& program,
                 const std::vector<std::string>& args) {
  auto result = gl::run_process(program, args, std::chrono::seconds(60));
  if (!result)
    state.SkipWithError(result.error().message.c_str());
  else if (result->exit_code != 0)  // a failed import is fast and measures nothing
    state.SkipWithError((program + " exited with " + std::to_string(result->exit_code)).c_str());
  else
    benchmark::DoNotOptimize(result->out);
}

// Repeated so the report carries a median; the machine is shared and noisy.
constexpr int kRepetitions = 7;

// Smoke mode (BENCH_SMOKE=1, bench/run.sh's, the suite's): each benchmark runs once. The
// per-benchmark MinTime and Repetitions below would override the command line's.
bool smoke() {
  const char* value = std::getenv("BENCH_SMOKE");
  return value && std::string_view(value) == "1";
}
template <int kTenthsOfSecond>
void measured(benchmark::internal::Benchmark* benchmark) {
  if (smoke())
    benchmark->Iterations(1)->Repetitions(1);
  else
    benchmark->MinTime(kTenthsOfSecond / 10.0)->Repetitions(kRepetitions);
}

// The library call `up` makes: gather (fake NVML, version files, no process) + evaluate.
void BM_CheckLibrary(benchmark::State& state) {
  auto& fixture = healthy();
  auto profile = gl::load_profile(gl::DirectorySource({}), fixture.profile_path);
  gl::ShellEnvironment shell{{{"PATH", "/usr/local/bin:/usr/bin:/bin"}}};
  const auto started = gl::processes_started();
  for (auto _ : state) {
    const auto plan = gl::make_launch_plan(*profile);
    auto request = gl::facts_request(*profile, plan, shell);
    request.probe_ports = false;
    request.probe_cache = fixture.node.scratch() / "probe-cache.json";
    auto facts = gl::gather_facts(gl::NodeFs(fixture.node.root()), request);
    auto findings = gl::evaluate(*profile, plan, facts, shell);
    if (gl::has_errors(findings)) state.SkipWithError("healthy fixture reported errors");
  }
  state.counters["children"] = benchmark::Counter(
      static_cast<double>(gl::processes_started() - started), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_CheckLibrary)->Unit(benchmark::kMillisecond)->Apply(measured<5>)->UseRealTime();

// The whole command as an operator runs it: process start, profile load, probes, report.
// `child_cpu_ms`: user + system time of the gpulaunch process itself, which the load of a shared
// machine inflates far less than wall time.
void BM_CheckCommand(benchmark::State& state) {
  auto& fixture = healthy();
  const double before = children_cpu_ms();
  const double faults = children_faults();
  for (auto _ : state)
    run_or_skip(state, GPULAUNCH_BIN,
                {"check", fixture.profile_path, "--root", fixture.node.root().string()});
  state.counters["child_cpu_ms"] =
      benchmark::Counter(children_cpu_ms() - before, benchmark::Counter::kAvgIterations);
  state.counters["child_faults"] =
      benchmark::Counter(children_faults() - faults, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_CheckCommand)->Unit(benchmark::kMillisecond)->Apply(measured<5>)->UseRealTime();

// The floors under BM_CheckCommand on the same machine at the same moment: starting the same
// binary to print its version (loader, libraries, static initialisers; no command is built for
// --version), and starting /bin/true (the fork and exec alone). check's own work is BM_CheckCommand
// minus the first.
void run_floor(benchmark::State& state, const std::string& program,
               const std::vector<std::string>& args) {
  const double before = children_cpu_ms();
  const double faults = children_faults();
  for (auto _ : state) run_or_skip(state, program, args);
  state.counters["child_cpu_ms"] =
      benchmark::Counter(children_cpu_ms() - before, benchmark::Counter::kAvgIterations);
  state.counters["child_faults"] =
      benchmark::Counter(children_faults() - faults, benchmark::Counter::kAvgIterations);
}
void BM_FloorGpulaunchVersion(benchmark::State& state) {
  run_floor(state, GPULAUNCH_BIN, {"--version"});
}
BENCHMARK(BM_FloorGpulaunchVersion)
    ->Unit(benchmark::kMillisecond)
    ->Apply(measured<3>)
    ->UseRealTime();
void BM_FloorTrue(benchmark::State& state) {
  run_floor(state, "/bin/true", {});
}
BENCHMARK(BM_FloorTrue)->Unit(benchmark::kMillisecond)->Apply(measured<3>)->UseRealTime();

// `check --node` (issue 47), as a Slurm prolog runs it before every job: the node's verdict on
// the same healthy fixture, without a profile. Goal: under 50 ms.
void BM_CheckNode(benchmark::State& state) {
  auto& fixture = healthy();
  const double before = children_cpu_ms();
  for (auto _ : state)
    run_or_skip(state, GPULAUNCH_BIN,
                {"check", "--node", "--json", "--root", fixture.node.root().string()});
  state.counters["child_cpu_ms"] =
      benchmark::Counter(children_cpu_ms() - before, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_CheckNode)->Unit(benchmark::kMillisecond)->Apply(measured<5>)->UseRealTime();

// Its library side: gather the node's facts (fake NVML, no process) and judge them.
void BM_CheckNodeLibrary(benchmark::State& state) {
  auto& fixture = healthy();
  const auto started = gl::processes_started();
  for (auto _ : state) {
    auto request = gl::node_facts_request();
    request.probe_cache = fixture.node.scratch() / "probe-cache.json";
    auto findings = gl::evaluate_node(gl::gather_facts(gl::NodeFs(fixture.node.root()), request));
    if (gl::has_errors(findings)) state.SkipWithError("healthy fixture: the node check failed");
  }
  state.counters["children"] = benchmark::Counter(
      static_cast<double>(gl::processes_started() - started), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_CheckNodeLibrary)->Unit(benchmark::kMillisecond)->Apply(measured<5>)->UseRealTime();

void BM_ManualTorchImport(benchmark::State& state) {
  for (auto _ : state)
    run_or_skip(state, "/usr/bin/python3", {"-c", "import torch; print(torch.version.cuda)"});
}
BENCHMARK(BM_ManualTorchImport)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(smoke() ? 1 : kRepetitions)
    ->UseRealTime();

// The floor of any Python route: interpreter start plus a stdlib import.
void BM_ManualPythonFloor(benchmark::State& state) {
  for (auto _ : state) run_or_skip(state, "/usr/bin/python3", {"-c", "import json"});
}
BENCHMARK(BM_ManualPythonFloor)->Unit(benchmark::kMillisecond)->Apply(measured<3>)->UseRealTime();

void BM_ManualNvccVersion(benchmark::State& state) {
  const std::string nvcc = std::filesystem::exists("/usr/local/cuda/bin/nvcc")
                               ? "/usr/local/cuda/bin/nvcc"
                               : (healthy().node.root() / "usr/local/cuda-13.0/bin/nvcc").string();
  for (auto _ : state) run_or_skip(state, nvcc, {"--version"});
}
BENCHMARK(BM_ManualNvccVersion)->Unit(benchmark::kMillisecond)->Apply(measured<3>)->UseRealTime();

// No driver here: the fixture's nvidia-smi script stands in (a real one takes 50-500 ms).
void BM_ManualNvidiaSmi(benchmark::State& state) {
  gl::test::FixtureNode node;
  node.nvidia_smi({{8, 12, 0}}, "580.95.05", "13.0");
  const std::string smi = (node.root() / "usr/bin/nvidia-smi").string();
  for (auto _ : state) run_or_skip(state, smi, {"-q"});
}
BENCHMARK(BM_ManualNvidiaSmi)->Unit(benchmark::kMillisecond)->Apply(measured<3>)->UseRealTime();

// The command the strace modes run: `check PROFILE`, or `check --node` with --node.
std::vector<std::string> check_args(bool node) {
  auto& fixture = healthy();
  if (node) return {"check", "--node", "--json", "--root", fixture.node.root().string()};
  return {"check", fixture.profile_path, "--root", fixture.node.root().string()};
}

// One warm `gpulaunch check` under strace -f: every execve, clone, fork and vfork it makes.
int strace_check(const std::string& gpulaunch, bool node = false) {
  auto& fixture = healthy();
  const std::vector<std::string> check = check_args(node);
  auto warm = gl::run_process(gpulaunch, check, std::chrono::seconds(60));  // fills any cache
  if (!warm || warm->exit_code != 0) {
    std::fprintf(stderr, "gpulaunch check failed on the healthy fixture\n");
    return 2;
  }
  const auto trace = fixture.node.scratch() / "strace.txt";
  std::vector<std::string> args{
      "-f", "-qq", "-e", "trace=execve,clone,clone3,fork,vfork", "-o", trace.string(), gpulaunch};
  args.insert(args.end(), check.begin(), check.end());
  auto traced = gl::run_process("/usr/bin/strace", args, std::chrono::seconds(60));
  if (!traced) {
    std::fprintf(stderr, "%s\n", traced.error().message.c_str());
    return 2;
  }
  std::ifstream in(trace);
  std::string line;
  int execs = 0;
  int spawns = 0;
  while (std::getline(in, line)) {
    std::printf("strace: %s\n", line.c_str());
    if (line.find("execve(") != std::string::npos) ++execs;
    if (line.find("clone") != std::string::npos || line.find("fork(") != std::string::npos)
      ++spawns;
  }
  std::printf(
      "warm `gpulaunch check` on the healthy fixture: %d execve (its own), %d "
      "clone/fork/vfork\n",
      execs, spawns);
  return execs == 1 && spawns == 0 ? 0 : 1;
}

// One warm `gpulaunch check` under `strace -c -f` (every system call, counted by name), and
// `strace -f` of the same run kept in FULL_TRACE when given: where the command's time goes.
int strace_count(const std::string& gpulaunch, const char* full_trace, bool node = false) {
  auto& fixture = healthy();
  const std::vector<std::string> check = check_args(node);
  auto warm = gl::run_process(gpulaunch, check, std::chrono::seconds(60));  // fills any cache
  if (!warm || warm->exit_code != 0) {
    std::fprintf(stderr, "gpulaunch check failed on the healthy fixture\n");
    return 2;
  }
  const auto summary = fixture.node.scratch() / "strace-c.txt";
  std::vector<std::string> args{"-f", "-c", "-o", summary.string(), gpulaunch};
  args.insert(args.end(), check.begin(), check.end());
  auto counted = gl::run_process("/usr/bin/strace", args, std::chrono::seconds(60));
  if (!counted || counted->exit_code != 0) {
    std::fprintf(stderr, "strace -c failed\n");
    return 2;
  }
  std::ifstream in(summary);
  std::printf("%s", std::string(std::istreambuf_iterator<char>(in), {}).c_str());
  if (full_trace) {
    std::vector<std::string> full{"-f", "-qq", "-o", full_trace, gpulaunch};
    full.insert(full.end(), check.begin(), check.end());
    if (auto traced = gl::run_process("/usr/bin/strace", full, std::chrono::seconds(60));
        !traced || traced->exit_code != 0)
      return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--strace-check") return strace_check(argv[2]);
  if ((argc == 3 || argc == 4) && std::string(argv[1]) == "--strace-count")
    return strace_count(argv[2], argc == 4 ? argv[3] : nullptr);
  // The same two for `check --node`.
  if (argc == 3 && std::string(argv[1]) == "--strace-check-node")
    return strace_check(argv[2], true);
  if ((argc == 3 || argc == 4) && std::string(argv[1]) == "--strace-count-node")
    return strace_count(argv[2], argc == 4 ? argv[3] : nullptr, true);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
