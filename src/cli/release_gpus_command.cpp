// SPDX-License-Identifier: Apache-2.0
// `gpulaunch release-gpus`: the Slurm epilog's (packaging/slurm/gpulaunch-epilog) end of a job's
// GPU processes, wired to NVML, /proc and pidfd signals; the decisions are supervise/gpu_release.
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/drain_reason.hpp"
#include "cli/exit_status.hpp"
#include "facts/gpu_probe.hpp"
#include "supervise/gpu_release.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {

// At most `limit` bytes of a /proc file of a process (procfs files report no size).
std::optional<std::string> read_proc(unsigned pid, std::string_view name, size_t limit = 1 << 20) {
  std::ifstream in(fmt::format("/proc/{}/{}", pid, name), std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// The Slurm job a cgroup path names: a component "job_<digits>" (task/cgroup and
// proctrack/cgroup's hierarchy, v1 "/slurm/uid_U/job_J/step_S" and v2
// "/system.slice/slurmstepd.scope/job_J/step_S": SchedMD/slurm src/plugins/cgroup at
// slurm-22-05-8-1).
std::optional<std::string> cgroup_job(std::string_view cgroup) {
  std::istringstream lines{std::string(cgroup)};
  std::string line;
  while (std::getline(lines, line)) {
    const auto path = line.substr(line.find(':', line.find(':') + 1) + 1);
    std::istringstream parts(path);
    std::string part;
    while (std::getline(parts, part, '/'))
      if (part.size() > 4 && part.starts_with("job_") &&
          part.find_first_not_of("0123456789", 4) == std::string::npos)
        return part.substr(4);
  }
  return std::nullopt;
}

// SLURM_JOB_ID in a process's environment (slurmstepd sets it for every task).
std::optional<std::string> environ_job(std::string_view environ) {
  constexpr std::string_view kKey = "SLURM_JOB_ID=";
  size_t at = 0;
  while (at < environ.size()) {
    size_t end = environ.find('\0', at);
    if (end == std::string_view::npos) end = environ.size();
    auto entry = environ.substr(at, end - at);
    if (entry.starts_with(kKey)) return std::string(entry.substr(kKey.size()));
    at = end + 1;
  }
  return std::nullopt;
}

std::optional<HolderProcess> inspect_process(unsigned pid) {
  auto stat = read_proc(pid, "stat", 4096);
  auto status = read_proc(pid, "status", 64 * 1024);
  if (!stat || !status) return std::nullopt;
  // "PID (comm) STATE PPID ...": comm may hold ')' itself; the fields after the last one.
  const auto open = stat->find('(');
  const auto close = stat->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  HolderProcess process;
  process.name = stat->substr(open + 1, close - open - 1);
  std::istringstream fields(stat->substr(close + 1));
  std::string field;
  std::vector<std::string> after;
  while (fields >> field && after.size() < 20) after.push_back(field);
  // A zombie holds no GPU memory: its handles closed when it exited.
  if (after.size() < 20 || after[0] == "Z" || after[0] == "X") return std::nullopt;
  const std::string& start = after[19];  // field 22, starttime
  std::from_chars(start.data(), start.data() + start.size(), process.start);
  std::istringstream lines(*status);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("Uid:")) continue;
    std::istringstream ids(line.substr(4));
    unsigned long real = 0, effective = 0;
    if (!(ids >> real >> effective)) return std::nullopt;
    process.uid = effective == 0 ? 0 : static_cast<uid_t>(real);
  }
  if (auto cgroup = read_proc(pid, "cgroup", 64 * 1024)) process.job = cgroup_job(*cgroup);
  if (!process.job)
    if (auto environ = read_proc(pid, "environ")) process.job = environ_job(*environ);
  return process;
}

// Through a pidfd, so a pid reused between the look and the signal is never hit: the process
// the pidfd holds is checked to be the one that started at `start`.
bool send_signal(unsigned pid, unsigned long long start, int signal) {
  const UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return false;
  auto process = inspect_process(pid);
  if (!process || process->start != start) return false;
  return ::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0) == 0;
}

struct Options {
  std::string job;
  long long uid = -1;
  std::string gpus;
  double grace_s = 10;
  double wait_s = 30;
  bool json = false;
};

int release_gpus(const Options& options) {
  GpuReleaseInput input;
  input.job = options.job;
  input.uid = static_cast<uid_t>(options.uid);
  input.grace = std::chrono::milliseconds(static_cast<long long>(options.grace_s * 1000));
  input.wait = std::chrono::milliseconds(static_cast<long long>(options.wait_s * 1000));
  input.own_pid = static_cast<unsigned>(::getpid());
  // The job's GPUs: NVML indices, or GPU UUIDs mapped to them. Anything else (a MIG instance, an
  // unknown UUID) leaves them unknown: every GPU is looked at, and only processes naming the job
  // are its.
  std::vector<int> gpus;
  input.gpus_known = !options.gpus.empty();
  std::optional<GpuProbe> probe;
  std::istringstream entries(options.gpus);
  std::string entry;
  while (input.gpus_known && std::getline(entries, entry, ',')) {
    int index = -1;
    auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
    if (error == std::errc() && end == entry.data() + entry.size() && index >= 0) {
      gpus.push_back(index);
      continue;
    }
    if (!probe)
      if (auto probed = probe_nvml()) probe = std::move(*probed);
    const GpuFact* found = nullptr;
    if (probe)
      for (const auto& gpu : probe->gpus)
        if (gpu.uuid == entry) found = &gpu;
    if (found)
      gpus.push_back(found->index);
    else
      input.gpus_known = false;
  }
  if (!input.gpus_known) gpus.clear();
  const bool json = options.json;
  GpuReleaseIo io{[gpus] { return nvml_compute_processes(gpus); }, inspect_process, send_signal,
                  system_timekeeper(),
                  [json](const std::string& line) {
                    fmt::print(json ? stderr : stdout, "gpulaunch release-gpus: {}\n", line);
                  }};
  const GpuRelease release = release_job_gpus(input, io);
  if (json) {
    nlohmann::json out{{"job", input.job},
                       {"uid", options.uid},
                       {"gpus", input.gpus_known ? nlohmann::json(gpus) : nlohmann::json("all")},
                       {"exit_code", release.exit_code},
                       {"ended", release.ended},
                       {"left_alone", release.left_alone},
                       {"reason", drain_reason(release.problem)}};
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else if (release.ended.empty() && release.exit_code == kReleaseOk) {
    fmt::print("gpulaunch release-gpus: nothing of job {} holds {}\n", input.job,
               input.gpus_known ? "its GPUs" : "a GPU");
  } else if (release.exit_code == kReleaseCouldNotRun) {
    fmt::print(stderr, "gpulaunch release-gpus: {}\n", release.problem);
  }
  return release.exit_code;
}

}  // namespace

void add_release_gpus_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "release-gpus",
      "End what still holds a finished job's GPUs (the Slurm epilog): its user's processes, "
      "SIGTERM then SIGKILL after --grace, then wait --wait for their memory; exit 1 when it "
      "stays held, 2 when NVML cannot say");
  command->group("");  // the package's Slurm epilog calls it
  static Options options;
  command->add_option("--job", options.job, "The job's id (SLURM_JOB_ID)")->required();
  command->add_option("--uid", options.uid, "The job's user (SLURM_JOB_UID)")
      ->required()
      ->check(CLI::NonNegativeNumber);
  command->add_option("--gpus", options.gpus,
                      "The job's GPUs, NVML indices or GPU UUIDs (SLURM_JOB_GPUS); without it "
                      "every GPU, and only processes whose cgroup or environment names the job");
  command->add_option("--grace", options.grace_s, "Seconds between SIGTERM and SIGKILL")
      ->check(CLI::Range(0.0, 3600.0));
  command
      ->add_option("--wait", options.wait_s,
                   "Seconds to wait after SIGKILL for the GPU memory to be released")
      ->check(CLI::Range(0.0, 3600.0));
  command->add_flag("--json", options.json, "Print the outcome as JSON (lines go to stderr)");
  command->callback([&context] { context.exit_code = release_gpus(options); });
}

}  // namespace gl
