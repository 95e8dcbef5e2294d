// SPDX-License-Identifier: Apache-2.0
#include "supervise/exit_class.hpp"

#include "catalog/exit_codes.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/stall_report.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

constexpr const char* kUnit = "gpulaunch-demo.service";

StopReport stop(std::string result, std::string code, std::string status,
                std::vector<std::string> lines = {}, std::vector<std::string> kernel = {}) {
  return StopReport{kUnit,
                    std::move(result),
                    std::move(code),
                    std::move(status),
                    std::move(lines),
                    std::move(kernel),
                    ""};
}

struct SignatureCase {
  const char* line;
  MemoryKnob knob;
};

TEST(ExitClass, EachCudaOomSignatureIsCudaOomWithItsKnob) {
  const SignatureCase cases[] = {
      {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
       MemoryKnob::mem_fraction},
      {"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
       MemoryKnob::kv_cache_room},
      {"Exception: Capture cuda graph failed: CUDA out of memory", MemoryKnob::cuda_graph_max_bs},
      {"RuntimeError: alloc_req_slots runs out of memory.", MemoryKnob::max_requests},
      {"ValueError: No available memory for the cache blocks.", MemoryKnob::kv_cache_room},
      {"ValueError: Free memory on device (1.2/80 GiB) on startup is less than desired GPU memory "
       "utilization (0.9, 72 GiB).",
       MemoryKnob::mem_fraction},
      // SGLang's alloc_token_slots (mem_cache/common.py), and its v0.4 phase-named forms.
      {"RuntimeError: Out of memory. Try to lower your batch size.", MemoryKnob::max_requests},
      {"[2026-03-02 10:11:12 TP0] Prefill out of memory. Try to lower your batch size.",
       MemoryKnob::max_requests},
      {"[2026-03-02 10:11:12 TP0] Decode out of memory. Try to lower your batch size.",
       MemoryKnob::max_requests},
      // cuBLAS's workspace while graphs are captured: the capture's knob, or torch's own text.
      {"Exception: Capture cuda graph failed: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when "
       "calling `cublasCreate(handle)`",
       MemoryKnob::cuda_graph_max_bs},
      {"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
       MemoryKnob::mem_fraction},
      // vLLM's KV room check, when `run`'s configuration-error verdict is missing: no step-down.
      {"ValueError: To serve at least one request with the model's max seq len (917504), 23.38 "
       "GiB KV cache is needed, which is larger than the available KV cache memory (22.61 GiB).",
       MemoryKnob::kv_cache_room},
      // llama.cpp's ggml-cuda, allocating a buffer.
      {"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9216.00 MiB on device 0: cudaMalloc "
       "failed: out of memory",
       MemoryKnob::mem_fraction},
  };
  for (const auto& c : cases) {
    auto result = classify_stop(stop("exit-code", "exited", "1", {"loading", c.line, "bye"}));
    EXPECT_EQ(result.value, ExitClass::cuda_oom) << c.line;
    EXPECT_EQ(result.evidence, c.line);
    EXPECT_EQ(result.knob, c.knob) << c.line;
  }
}

TEST(ExitClass, KernelOomKillLineForTheUnitIsHostOomEvenAsSigkill) {
  const std::string line =
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
      "oom_memcg=/gpulaunch-harness.7/system.slice/gpulaunch-demo.service,"
      "task_memcg=/gpulaunch-harness.7/system.slice/"
      "gpulaunch-demo.service,task=python3,pid=42,uid=0";
  auto from_run = classify_stop(stop("exit-code", "exited", "137", {}, {line}));
  EXPECT_EQ(from_run.value, ExitClass::host_oom);
  EXPECT_EQ(from_run.evidence, line);
  EXPECT_EQ(classify_stop(stop("signal", "killed", "KILL", {}, {line})).value, ExitClass::host_oom);
}

TEST(ExitClass, KernelOomKillOfAnotherUnitIsNotOurs) {
  const std::string other =
      "oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/system.slice/gpulaunch-demo2.service,"
      "task_memcg=/system.slice/gpulaunch-demo2.service,task=python3,pid=42,uid=0";
  const std::string prefixed =
      "oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/system.slice/xgpulaunch-demo.service,"
      "task_memcg=/system.slice/xgpulaunch-demo.service,task=python3";
  EXPECT_FALSE(is_kernel_oom_kill_of(other, kUnit));
  EXPECT_FALSE(is_kernel_oom_kill_of(prefixed, kUnit));
  EXPECT_TRUE(is_kernel_oom_kill_of(
      "oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/system.slice/gpulaunch-demo.service",
      kUnit));
  EXPECT_EQ(classify_stop(stop("signal", "killed", "KILL", {}, {other})).value, ExitClass::crash);
}

TEST(ExitClass, ResultOomKillAndTheCgroupCounterAreHostOom) {
  EXPECT_EQ(classify_stop(stop("oom-kill", "killed", "KILL")).value, ExitClass::host_oom);
  auto report = stop("exit-code", "exited", "137");
  report.cgroup_oom_kill = "memory cgroup oom_kill counter 0 -> 1";
  auto result = classify_stop(report);
  EXPECT_EQ(result.value, ExitClass::host_oom);
  EXPECT_EQ(result.evidence, report.cgroup_oom_kill);
}

TEST(ExitClass, ConfigurationErrorAndSetupFailureAreTerminal) {
  auto config =
      classify_stop(stop("exit-code", "exited", "78",
                         {"usage: ...", "launch_server: error: unrecognized arguments: --bogus"}));
  EXPECT_EQ(config.value, ExitClass::config_error);
  EXPECT_EQ(config.evidence, "launch_server: error: unrecognized arguments: --bogus");
  EXPECT_TRUE(is_terminal(config.value));
  EXPECT_FALSE(counts_as_failure(config.value));
  for (const char* code : {"200", "217", "226", "244"}) {
    auto result = classify_stop(stop("exit-code", "exited", code));
    EXPECT_EQ(result.value, ExitClass::setup_failure) << code;
    EXPECT_TRUE(is_terminal(result.value));
  }
  EXPECT_EQ(classify_stop(stop("exit-code", "exited", "245")).value, ExitClass::crash);
  EXPECT_EQ(classify_stop(stop("exit-code", "exited", "79")).value, ExitClass::budget);
}

TEST(ExitClass, WatchdogTimeoutCleanCrash) {
  EXPECT_EQ(classify_stop(stop("watchdog", "exited", "134")).value, ExitClass::hang);
  EXPECT_EQ(classify_stop(stop("timeout", "killed", "TERM")).value, ExitClass::start_timeout);
  EXPECT_EQ(classify_stop(stop("exit-code", "exited", "75")).value, ExitClass::start_timeout);
  EXPECT_EQ(classify_stop(stop("success", "exited", "0")).value, ExitClass::clean);
  EXPECT_EQ(classify_stop(stop("success", "killed", "TERM")).value, ExitClass::clean);
  auto segv = classify_stop(stop("exit-code", "exited", "139", {"Segmentation fault"}));
  EXPECT_EQ(segv.value, ExitClass::crash);
  EXPECT_EQ(segv.evidence, "SERVICE_RESULT=exit-code EXIT_CODE=exited EXIT_STATUS=139");
}

// run's exit 81 after its stall line: a failure of its own class, retried like a crash. The stall
// line is the evidence and its fields come back; without it (the line lost) the status still says.
TEST(ExitClass, RunsStallExitIsStalledWithWhatItSaw) {
  const std::string line = stall_line({StallSignal::metrics, Seconds{6}, 2, 4711});
  const std::vector<std::string> lines = {"INFO:     127.0.0.1 - \"GET /health HTTP/1.1\" 200 OK",
                                          line,
                                          "Fatal Python error: Aborted",
                                          "",
                                          "Thread 0x00007f0e4a7fc640 (most recent call first):",
                                          run_verdict_line("engine stalled", kExitStalled)};
  auto result = classify_stop(stop("exit-code", "exited", std::to_string(kExitStalled), lines));
  EXPECT_EQ(result.value, ExitClass::stalled);
  EXPECT_EQ(exit_class_name(result.value), "stalled");
  EXPECT_EQ(result.evidence, line);
  ASSERT_TRUE(result.stall);
  EXPECT_EQ(result.stall->signal, StallSignal::metrics);
  EXPECT_EQ(result.stall->still_for, Seconds{6});
  EXPECT_EQ(result.stall->in_flight, 2);
  EXPECT_EQ(result.stall->tokens, 4711);
  EXPECT_TRUE(counts_as_failure(result.value));
  EXPECT_FALSE(is_terminal(result.value));

  auto bare = classify_stop(stop("exit-code", "exited", "81"));
  EXPECT_EQ(bare.value, ExitClass::stalled);
  EXPECT_EQ(bare.evidence, "SERVICE_RESULT=exit-code EXIT_CODE=exited EXIT_STATUS=81");
  EXPECT_FALSE(bare.stall);
  // A stall line from an engine that then crashed otherwise is not a stall: the status decides.
  EXPECT_EQ(classify_stop(stop("exit-code", "exited", "1", lines)).value, ExitClass::crash);
  // Killed by the watchdog while run was still deciding: systemd's word (hang) stands.
  EXPECT_EQ(classify_stop(stop("watchdog", "killed", "ABRT", lines)).value, ExitClass::hang);
}

TEST(ExitClass, NamesRoundTrip) {
  for (auto value : {ExitClass::clean, ExitClass::host_oom, ExitClass::cuda_oom, ExitClass::hang,
                     ExitClass::start_timeout, ExitClass::config_error, ExitClass::setup_failure,
                     ExitClass::budget, ExitClass::residue, ExitClass::stalled, ExitClass::crash})
    EXPECT_EQ(parse_exit_class(exit_class_name(value)), value);
}

// systemd stops restarting on exactly the statuses record-exit calls terminal: the unit's
// RestartPreventExitStatus= and the classification read the same table.
TEST(ExitClass, TerminalClassesAreTheStatusesThatPreventARestart) {
  for (int status = 0; status <= 255; ++status) {
    const auto result = classify_stop(stop("exit-code", "exited", std::to_string(status)));
    EXPECT_EQ(is_terminal(result.value), prevents_restart(status))
        << status << " is " << exit_class_name(result.value);
  }
}

// SGLang's cuda_graph_backend_utils (f438a11) says when a failed capture was no OOM: lowering
// the share or the graphs would not help, so it is a crash with that line as the evidence.
TEST(ExitClass, ACaptureFailureTheEngineSaysIsNoOomIsACrash) {
  const std::string not_oom =
      "This is not an out-of-memory error, so lowering --mem-fraction-static or "
      "--cuda-graph-max-bs-decode will not help.";
  auto result = classify_stop(stop(
      "exit-code", "exited", "1",
      {"Capture cuda graph begin. This can take up to several minutes.",
       "Exception: Capture cuda graph failed: Triton Error [CUDA]: an illegal memory access was "
       "encountered",
       not_oom,
       "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose "}));
  EXPECT_EQ(result.value, ExitClass::crash);
  EXPECT_EQ(result.evidence, not_oom + " (not out of memory: no step-down)");
  EXPECT_FALSE(result.knob);
  auto ipc = classify_stop(stop(
      "exit-code", "exited", "1",
      {"Exception: Capture cuda graph failed: custom_all_reduce.cuh:368 'invalid argument'",
       "The failure came from custom all-reduce sharing buffers between GPUs through CUDA IPC, "
       "not from a GPU memory shortage."}));
  EXPECT_EQ(ipc.value, ExitClass::crash);
  // Its OOM hint names the current flag: still the capture's knob.
  auto oom = classify_stop(stop(
      "exit-code", "exited", "1",
      {"Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB",
       "Possible solutions:", "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)"}));
  EXPECT_EQ(oom.value, ExitClass::cuda_oom);
  EXPECT_EQ(oom.knob, MemoryKnob::cuda_graph_max_bs);
}

// vLLM refusing a context its KV cache cannot hold once: `run` exits with the configuration-error
// status (not restarted) and the event says the fix.
TEST(ExitClass, VllmsKvRoomCheckIsAConfigurationErrorWithItsFix) {
  const std::string line =
      "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 "
      "GiB KV cache is needed, which is larger than the available KV cache memory (9.54 GiB). "
      "Based on the available memory, the estimated maximum model length is 78112. Try "
      "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
      "engine.";
  auto result = classify_stop(
      stop("exit-code", "exited", std::to_string(kExitConfig), {"loading", line, "bye"}));
  EXPECT_EQ(result.value, ExitClass::config_error);
  EXPECT_EQ(result.evidence,
            line +
                "; fix: one request of the model's full context does not fit in the KV cache: "
                "set a shorter --max-model-len in 'engine.args', raise 'engine.mem_fraction', or "
                "spread the model over more GPUs");
}

}  // namespace
}  // namespace gl
