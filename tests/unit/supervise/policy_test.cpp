// SPDX-License-Identifier: Apache-2.0
#include "supervise/policy.hpp"

#include <gtest/gtest.h>

#include "supervise/step_down.hpp"

namespace gl {
namespace {

RestartSettings settings() {
  RestartSettings restart;
  restart.delay = Seconds{10};
  restart.max_delay = Seconds{300};
  restart.budget = 5;
  return restart;
}

TEST(Policy, BackoffDoublesFromDelayToTheCap) {
  const auto restart = settings();
  EXPECT_EQ(backoff_delay(0, restart), Seconds{0});
  EXPECT_EQ(backoff_delay(1, restart), Seconds{10});
  EXPECT_EQ(backoff_delay(2, restart), Seconds{20});
  EXPECT_EQ(backoff_delay(3, restart), Seconds{40});
  EXPECT_EQ(backoff_delay(6, restart), Seconds{300});
  EXPECT_EQ(backoff_delay(1000, restart), Seconds{300});
}

TEST(Policy, BudgetSpentMeansStayDown) {
  SupervisorState state;
  state.consecutive_failures = 4;
  state.last_class = "crash";
  auto decision = decide_start(state, settings());
  EXPECT_FALSE(decision.stay_down);
  EXPECT_EQ(decision.delay, Seconds{80});
  state.consecutive_failures = 5;
  decision = decide_start(state, settings());
  EXPECT_TRUE(decision.stay_down);
  EXPECT_NE(decision.reason.find("crash loop: 5 failures"), std::string::npos) << decision.reason;
}

TEST(Policy, CudaOomStepsDownWithinBoundsHostOomLowersConcurrency) {
  SupervisorState state;
  Classification cuda{ExitClass::cuda_oom, "torch.OutOfMemoryError", MemoryKnob::mem_fraction};
  auto outcome = after_stop(state, cuda, settings(), 100, 2, 3);
  EXPECT_EQ(outcome.state.gpu_level, 1);
  EXPECT_EQ(outcome.state.consecutive_failures, 1);
  EXPECT_NE(outcome.action.find("restart after 10s; step down to GPU memory level 1"),
            std::string::npos)
      << outcome.action;
  outcome = after_stop(outcome.state, cuda, settings(), 200, 2, 3);
  outcome = after_stop(outcome.state, cuda, settings(), 300, 2, 3);
  EXPECT_EQ(outcome.state.gpu_level, 2);  // the floor
  outcome = after_stop(outcome.state, Classification{ExitClass::host_oom, "oom-kill", {}},
                       settings(), 400, 2, 3);
  EXPECT_EQ(outcome.state.host_level, 1);
  EXPECT_EQ(outcome.state.last_class, "host-oom");
}

// What the engine's message says to change decides the ladder; classified from real lines.
TEST(Policy, EachCudaOomMessageTurnsTheKnobItNames) {
  struct Case {
    const char* line;
    int gpu_level;
    int host_level;
    const char* step;
  };
  const Case cases[] = {
      {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", 1, 0,
       "; step down to GPU memory level 1"},
      {"Exception: Capture cuda graph failed: CUDA out of memory.", 1, 0,
       "; step down to GPU memory level 1"},
      {"RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for "
       "`--max-running-requests`.",
       0, 1, "; step down to concurrency level 1"},
      {"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", 0, 0,
       "; no step-down: the GPU memory share leaves no room for the KV cache (raise "
       "engine.mem_fraction, or spread the model over more GPUs)"},
      {"ValueError: No available memory for the cache blocks. Try increasing "
       "`gpu_memory_utilization` when initializing the engine.",
       0, 0,
       "; no step-down: the GPU memory share leaves no room for the KV cache (raise "
       "engine.mem_fraction, or spread the model over more GPUs)"},
  };
  for (const auto& c : cases) {
    StopReport report;
    report.service_result = "exit-code";
    report.exit_code = "exited";
    report.exit_status = "1";
    report.lines = {"Loading safetensors checkpoint shards: 100% Completed", c.line};
    const Classification stop = classify_stop(report);
    ASSERT_EQ(stop.value, ExitClass::cuda_oom) << c.line;
    auto outcome = after_stop(SupervisorState{}, stop, settings(), 100, 5, 5);
    EXPECT_EQ(outcome.state.gpu_level, c.gpu_level) << c.line;
    EXPECT_EQ(outcome.state.host_level, c.host_level) << c.line;
    EXPECT_EQ(outcome.state.consecutive_failures, 1) << c.line;  // still under the budget
    EXPECT_EQ(outcome.action, std::string("restart after 10s") + c.step) << c.line;
  }
}

TEST(Policy, ConfigErrorIsNotAFailureButStaysDown) {
  auto outcome = after_stop(SupervisorState{}, Classification{ExitClass::config_error, "x", {}},
                            settings(), 1, 5, 5);
  EXPECT_EQ(outcome.state.consecutive_failures, 0);
  EXPECT_NE(outcome.action.find("not retried"), std::string::npos);
}

TEST(Policy, StableForgivesAndStepsUpOneLevel) {
  SupervisorState state;
  state.consecutive_failures = 3;
  state.gpu_level = 2;
  state.host_level = 1;
  auto outcome = after_stable(state, 500);
  EXPECT_EQ(outcome.state.consecutive_failures, 0);
  EXPECT_EQ(outcome.state.gpu_level, 1);
  EXPECT_EQ(outcome.state.host_level, 0);
  EXPECT_EQ(outcome.state.last_stable_usec, 500);
  EXPECT_EQ(outcome.action,
            "forgive 3 failure(s); step up to GPU memory level 1; step up to concurrency level 0");
}

constexpr int64_t kSecond = 1'000'000;

// An invocation that became ready at 100 s and stopped serving at 800 s.
InvocationTimes served_700s() {
  return {50 * kSecond, 100 * kSecond, 800 * kSecond};
}

TEST(Policy, ServedCountsFromReadyToTheStopNotFromAnEarlierInvocation) {
  const SupervisorState state;
  EXPECT_EQ(served_for(served_700s(), state, 900 * kSecond), Seconds{700});
  // Still serving (no exit after the enter): until now.
  EXPECT_EQ(served_for({50 * kSecond, 100 * kSecond, 10 * kSecond}, state, 400 * kSecond),
            Seconds{300});
  // Never ready in this invocation: the enter timestamp is an earlier invocation's.
  EXPECT_EQ(served_for({500 * kSecond, 100 * kSecond, 450 * kSecond}, state, 900 * kSecond),
            Seconds{0});
  EXPECT_EQ(served_for({}, state, 900 * kSecond), Seconds{0});
  // A failure recorded while it served (another rank's) restarts the count.
  SupervisorState failed;
  failed.last_failure_usec = 600 * kSecond;
  EXPECT_EQ(served_for(served_700s(), failed, 900 * kSecond), Seconds{200});
  SupervisorState forgiven;
  forgiven.last_stable_usec = 799 * kSecond;
  EXPECT_EQ(served_for(served_700s(), forgiven, 900 * kSecond), Seconds{1});
}

TEST(Policy, AStopAfterTheStablePeriodForgivesFirst) {
  RestartSettings restart = settings();
  restart.stable_after = Seconds{600};
  SupervisorState state;
  state.consecutive_failures = 3;
  state.gpu_level = 2;
  auto stable = forgive_if_stable(state, Seconds{700}, restart, 900 * kSecond);
  ASSERT_TRUE(stable);
  EXPECT_EQ(stable->state.consecutive_failures, 0);
  EXPECT_EQ(stable->state.gpu_level, 1);
  EXPECT_EQ(stable->action, "forgive 3 failure(s); step up to GPU memory level 1");
  // Then the stop itself counts from zero: a crash after a long service is failure 1, not 4.
  auto stop = after_stop(stable->state, Classification{ExitClass::crash, "boom", {}}, restart,
                         900 * kSecond, 3, 3);
  EXPECT_EQ(stop.state.consecutive_failures, 1);
  EXPECT_FALSE(forgive_if_stable(state, Seconds{599}, restart, 900 * kSecond));
  EXPECT_FALSE(forgive_if_stable(SupervisorState{}, Seconds{700}, restart, 900 * kSecond));
  restart.stable_after = Seconds{0};
  EXPECT_FALSE(forgive_if_stable(state, Seconds{700}, restart, 900 * kSecond));
}

TEST(Policy, StatusSaysWhenALevelWillBeForgiven) {
  RestartSettings restart = settings();
  restart.stable_after = Seconds{600};
  SupervisorState state;
  state.gpu_level = 1;
  EXPECT_EQ(forgiveness_outlook(state, Seconds{240}, true, restart),
            "forgiven one level at a stop after 6min more serving");
  EXPECT_EQ(forgiveness_outlook(state, Seconds{660}, true, restart),
            "served 11min: forgiven one level at the next stop");
  EXPECT_EQ(forgiveness_outlook(state, Seconds{0}, false, restart),
            "forgiven one level at a stop after serving 10min");
  EXPECT_EQ(forgiveness_outlook(SupervisorState{}, Seconds{0}, true, restart), "");
}

TEST(Policy, AnUnreadableStateBacksOffTheLongestAndAnUnrecordedStopStaysDown) {
  const auto restart = settings();
  auto unreadable = decide_start_without_history(std::nullopt, "not JSON", restart);
  EXPECT_FALSE(unreadable.stay_down);
  EXPECT_EQ(unreadable.delay, Seconds{300});
  auto unrecorded = decide_start_without_history(std::string("disk full"), "", restart);
  EXPECT_TRUE(unrecorded.stay_down);
  EXPECT_NE(unrecorded.reason.find("disk full"), std::string::npos) << unrecorded.reason;
}

TEST(StepDown, SglangMemFractionInsertedFromDefaultThenLowered) {
  // GPUs NVML cannot describe: SGLang's own fallback share, 0.95, and graphs up to 160.
  std::vector<std::string> argv{"python", "-m", "sglang.launch_server", "--port", "30000"};
  // The installed release unknown: the graph knob in the spelling every SGLang takes.
  auto one = step_down(argv, EngineKind::sglang, 1, 0);
  EXPECT_EQ(one.argv, (std::vector<std::string>{"python", "-m", "sglang.launch_server", "--port",
                                                "30000", "--mem-fraction-static", "0.9",
                                                "--cuda-graph-max-bs", "80"}));
  EXPECT_EQ(one.changes,
            (std::vector<std::string>{
                "--mem-fraction-static 0.95 -> 0.9 (from SGLang default 0.95 (GPU memory unknown))",
                "--cuda-graph-max-bs 160 -> 80 (from SGLang default 160 (GPU memory "
                "unknown))"}));
  EXPECT_EQ(step_down(argv, EngineKind::sglang, 0, 0).argv, argv);
}

// An SGLang before the phase-split graph flags (0.5.15) exits "unrecognized arguments" on
// --cuda-graph-max-bs-decode: step-down inserts the spelling the installed release takes.
TEST(StepDown, InsertedKnobsTakeTheInstalledReleasesSpelling) {
  const std::vector<std::string> argv{"python", "-m", "sglang.launch_server"};
  auto old_release = step_down(argv, EngineKind::sglang, 1, 0, {}, {}, std::string("0.5.6"));
  EXPECT_EQ(old_release.argv.at(5), "--cuda-graph-max-bs");
  EXPECT_EQ(old_release.changes.at(1),
            "--cuda-graph-max-bs 160 -> 80 (from SGLang default 160 (GPU memory unknown))");
  auto new_release = step_down(argv, EngineKind::sglang, 1, 0, {}, {}, std::string("0.5.16"));
  EXPECT_EQ(new_release.argv.at(5), "--cuda-graph-max-bs-decode");
  // A spelling the argv already holds stays as written, whatever the release.
  auto written = step_down({"x", "--cuda-graph-max-bs-decode", "64"}, EngineKind::sglang, 1, 0, {},
                           {}, std::string("0.5.6"));
  EXPECT_EQ(written.argv, (std::vector<std::string>{"x", "--cuda-graph-max-bs-decode", "32",
                                                    "--mem-fraction-static", "0.9"}));
}

TEST(StepDown, ExistingValuesAreLoweredInPlaceWithinFloors) {
  // --cuda-graph-max-bs is SGLang's deprecated alias of --cuda-graph-max-bs-decode: lowered as
  // written.
  std::vector<std::string> argv{"x",  "--mem-fraction-static=0.6", "--cuda-graph-max-bs",
                                "64", "--max-running-requests",    "100"};
  auto stepped = step_down(argv, EngineKind::sglang, 4, 2);
  EXPECT_EQ(stepped.argv[1], "--mem-fraction-static=0.5");  // 0.6 - 0.2 floored at 0.5
  EXPECT_EQ(stepped.argv[3], "4");                          // 64 >> 4
  EXPECT_EQ(stepped.argv[5], "25");                         // 100 >> 2
  EXPECT_EQ(stepped.changes.at(1), "--cuda-graph-max-bs 64 -> 4 (from engine.args)");
  auto decode = step_down({"x", "--cuda-graph-max-bs-decode=32"}, EngineKind::sglang, 1, 0);
  EXPECT_EQ(decode.argv.at(1), "--cuda-graph-max-bs-decode=16");
  auto vllm = step_down({"vllm", "serve", "m"}, EngineKind::vllm, 2, 1);
  EXPECT_EQ(vllm.argv, (std::vector<std::string>{"vllm", "serve", "m", "--gpu-memory-utilization",
                                                 "0.82", "--max-num-seqs", "128"}));
  EXPECT_EQ(step_down({"trtllm-serve"}, EngineKind::trtllm, 3, 3).argv,
            std::vector<std::string>{"trtllm-serve"});
}

TEST(StepDown, LevelsEndAtTheFloorOfTheLargestDefault) {
  EXPECT_EQ(max_gpu_level(EngineKind::sglang), 9);  // 0.95 (memory unknown) -> 0.50
  EXPECT_EQ(max_gpu_level(EngineKind::vllm), 8);    // 0.92 -> 0.52
  EXPECT_EQ(max_host_level(EngineKind::vllm), 7);   // 1024 -> 8
  EXPECT_EQ(max_gpu_level(EngineKind::trtllm), 0);
}

// The baselines are what the engines would use on the unit's GPUs (NVML's total memory and name):
// SGLang's share and graph batch from memory_hook.py, vLLM's max_num_seqs from arg_utils.py.
TEST(StepDown, BaselinesAreTheEnginesOwnDefaultsOnTheUnitsGpus) {
  const std::vector<std::string> sglang{"python", "-m", "sglang.launch_server"};
  const std::vector<std::string> vllm{"vllm", "serve", "m"};
  const GpuContext h200{143771, "NVIDIA H200", 1, 1};
  EXPECT_EQ(step_down(sglang, EngineKind::sglang, 1, 0, h200).changes,
            (std::vector<std::string>{
                "--mem-fraction-static 0.907 -> 0.857 (from SGLang default for 143771 MiB GPUs "
                "at tp 1, pp 1: 0.907 (reserves 13440 MiB))",
                "--cuda-graph-max-bs 256 -> 128 (from SGLang default for 143771 MiB GPUs "
                "at tp 1: 256)"}));
  EXPECT_EQ(step_down(vllm, EngineKind::vllm, 1, 1, h200).changes,
            (std::vector<std::string>{
                "--gpu-memory-utilization 0.92 -> 0.87 (from vLLM default 0.92)",
                "--max-num-seqs 1024 -> 512 (from vLLM default for GPUs of 70 GiB or more other "
                "than A100 (143771 MiB): 1024)"}));
  // tp 8 doubles the graphs' batch and adds a GiB of parallel slack.
  const GpuContext h200_tp8{143771, "NVIDIA H200", 8, 1};
  EXPECT_EQ(step_down(sglang, EngineKind::sglang, 1, 0, h200_tp8).argv.at(4), "0.847");

  const GpuContext a100{81920, "NVIDIA A100-SXM4-80GB", 1, 1};
  EXPECT_EQ(step_down(sglang, EngineKind::sglang, 1, 0, a100).changes.at(0),
            "--mem-fraction-static 0.836 -> 0.786 (from SGLang default for 81920 MiB GPUs at tp "
            "1, pp 1: 0.836 (reserves 13440 MiB))");
  EXPECT_EQ(step_down(vllm, EngineKind::vllm, 0, 1, a100).changes,
            (std::vector<std::string>{
                "--max-num-seqs 256 -> 128 (from vLLM default for 81920 MiB A100: 256)"}));

  const GpuContext rtx4090{24564, "NVIDIA GeForce RTX 4090", 1, 1};
  EXPECT_EQ(step_down(sglang, EngineKind::sglang, 1, 0, rtx4090).changes,
            (std::vector<std::string>{
                "--mem-fraction-static 0.72 -> 0.67 (from SGLang default for 24564 MiB GPUs at tp "
                "1, pp 1: 0.72 (reserves 6880 MiB))",
                "--cuda-graph-max-bs 48 -> 24 (from SGLang default for 24564 MiB GPUs at "
                "tp 1: 48)"}));
  EXPECT_EQ(step_down(vllm, EngineKind::vllm, 0, 1, rtx4090).changes.at(0),
            "--max-num-seqs 256 -> 128 (from vLLM default for 24564 MiB GPUs: 256)");

  const GpuContext unknown{};
  EXPECT_EQ(step_down(vllm, EngineKind::vllm, 1, 1, unknown).changes,
            (std::vector<std::string>{
                "--gpu-memory-utilization 0.92 -> 0.87 (from vLLM default 0.92)",
                "--max-num-seqs 256 -> 128 (from vLLM default 256 (GPU memory unknown))"}));
  // What engine.args sets is the baseline, whatever the GPUs.
  EXPECT_EQ(step_down({"x", "--mem-fraction-static", "0.8"}, EngineKind::sglang, 1, 0, h200)
                .changes.at(0),
            "--mem-fraction-static 0.8 -> 0.75 (from engine.args)");
}

TEST(StepDown, LlamacppHalvesTheContextAndSlotsOnlyWhereTheArgvSetsThem) {
  // llama-server sizes both itself by default: nothing to count down from, nothing inserted.
  const std::vector<std::string> bare{"/bin/llama-server", "--model", "/m.gguf"};
  EXPECT_EQ(step_down(bare, EngineKind::llamacpp, 1, 1).argv, bare);
  auto stepped = step_down({"/bin/llama-server", "-c", "32768", "--parallel", "16"},
                           EngineKind::llamacpp, 2, 1);
  EXPECT_EQ(stepped.argv,
            (std::vector<std::string>{"/bin/llama-server", "-c", "8192", "--parallel", "8"}));
  EXPECT_EQ(stepped.changes, (std::vector<std::string>{"-c 32768 -> 8192 (from engine.args)",
                                                       "--parallel 16 -> 8 (from engine.args)"}));
  // The later spelling wins, as in llama.cpp's parser; the floor holds.
  auto later = step_down({"x", "--ctx-size", "4096", "-c", "2048"}, EngineKind::llamacpp, 3, 0);
  EXPECT_EQ(later.argv, (std::vector<std::string>{"x", "--ctx-size", "4096", "-c", "1024"}));
  EXPECT_EQ(max_gpu_level(EngineKind::llamacpp), 3);
  EXPECT_EQ(max_host_level(EngineKind::llamacpp), 3);
}

// The manual's knob list comes from these: each knob as step_down actually treats it.
TEST(StepDown, KnobPoliciesSayWhichKnobsAreLoweredAndFromWhat) {
  const auto policy = [](EngineKind kind, std::string_view key) -> std::optional<KnobPolicy> {
    for (const auto& each : knob_policies(kind))
      if (each.key == key) return each;
    return std::nullopt;
  };
  // SGLang: its memory share has a default per GPU, so it is lowered (inserted when unset).
  ASSERT_TRUE(policy(EngineKind::sglang, "engine.mem_fraction"));
  EXPECT_EQ(policy(EngineKind::sglang, "engine.mem_fraction")->step, KnobStep::from_default);
  EXPECT_EQ(policy(EngineKind::sglang, "engine.mem_fraction")->trigger, KnobTrigger::gpu_oom);
  ASSERT_TRUE(policy(EngineKind::sglang, "engine.max_requests"));
  EXPECT_EQ(policy(EngineKind::sglang, "engine.max_requests")->trigger, KnobTrigger::host_oom);
  EXPECT_NE(policy(EngineKind::sglang, "engine.max_requests")->step, KnobStep::untouched);
  // trtllm-serve's row does not step down: every knob it has is left alone.
  for (const auto& each : knob_policies(EngineKind::trtllm))
    EXPECT_EQ(each.step, KnobStep::untouched) << each.key;
  // llama.cpp has no memory share: a CUDA OOM halves the context instead.
  EXPECT_FALSE(policy(EngineKind::llamacpp, "engine.mem_fraction") &&
               policy(EngineKind::llamacpp, "engine.mem_fraction")->step != KnobStep::untouched);
  ASSERT_TRUE(policy(EngineKind::llamacpp, "context"));
  EXPECT_NE(policy(EngineKind::llamacpp, "context")->step, KnobStep::untouched);
  // A command has no knobs at all.
  EXPECT_TRUE(knob_policies(EngineKind::command).empty());
}

// A stop systemd will not restart names, as its action, its class's stay-down text (the exit-class
// table's, one place); every other failure restarts or stays down by the restart settings.
TEST(Policy, ATerminalStopsActionIsItsClasssStayDownText) {
  for (ExitClass value : all_exit_classes()) {
    const auto outcome = after_stop(
        SupervisorState{}, Classification{value, "evidence", std::nullopt}, settings(), 100, 2, 3);
    if (is_terminal(value)) {
      ASSERT_TRUE(stay_down_action(value)) << exit_class_name(value);
      EXPECT_TRUE(outcome.action.starts_with("stay down: ")) << outcome.action;
      EXPECT_EQ(outcome.action, *stay_down_action(value));
    } else {
      EXPECT_FALSE(stay_down_action(value)) << exit_class_name(value);
      EXPECT_FALSE(outcome.action.starts_with("stay down")) << outcome.action;
    }
  }
  EXPECT_EQ(after_stop({}, Classification{ExitClass::config_error, "e", std::nullopt}, settings(),
                       1, 2, 3)
                .action,
            "stay down: configuration error, not retried (fix the profile, then `gpulaunch up`)");
}

// Issue 44: the budget counts starts that fail to serve. Each case is one engine's run of stops.
constexpr Seconds kNeverReady{-1};  // a start that never sent READY=1

// Folds stops one after another, each having served `served` (kNeverReady: not ready).
StopOutcome stops(SupervisorState state, const Classification& stop, const RestartSettings& restart,
                  Seconds served, int count) {
  StopOutcome outcome{state, "", false};
  for (int i = 0; i < count; ++i)
    outcome = after_stop(outcome.state, stop, restart, 100 + i, 2, 3,
                         served == kNeverReady ? std::nullopt : std::optional<Seconds>(served));
  return outcome;
}

const Classification kCrash{ExitClass::crash, "engine was killed by signal SEGV", std::nullopt};

TEST(Policy, AStartThatNeverBecomesReadyCountsAndTheBudgetStopsIt) {
  const auto restart = settings();  // budget 5, probation 5min
  auto outcome = stops({}, kCrash, restart, kNeverReady, 4);
  EXPECT_EQ(failed_starts(outcome.state), 4);
  EXPECT_EQ(outcome.action, "restart after 1min 20s");
  EXPECT_FALSE(decide_start(outcome.state, restart).stay_down);
  outcome = stops(outcome.state, kCrash, restart, kNeverReady, 1);
  EXPECT_EQ(outcome.action, "stay down: crash-loop budget of 5 failures spent");
  const auto start = decide_start(outcome.state, restart);
  EXPECT_TRUE(start.stay_down);
  EXPECT_EQ(start.reason, "crash loop: 5 failures in a row (budget 5), last crash");
  EXPECT_EQ(outcome.state.deaths_after_serving, 0);
}

// Killed 8 s after each READY=1 (the measurement): it never served past the probation,
// so those are failed starts, as a start that never became ready.
TEST(Policy, ADeathWithinTheProbationAfterReadyCountsAsAFailedStart) {
  auto restart = settings();
  auto outcome = stops({}, kCrash, restart, Seconds{8}, 5);
  EXPECT_EQ(outcome.action, "stay down: crash-loop budget of 5 failures spent");
  EXPECT_TRUE(decide_start(outcome.state, restart).stay_down);
  // Just under the probation still counts; at it, the start served.
  outcome = stops({}, kCrash, restart, Seconds{299}, 5);
  EXPECT_TRUE(decide_start(outcome.state, restart).stay_down);
  outcome = stops({}, kCrash, restart, Seconds{300}, 5);
  EXPECT_FALSE(decide_start(outcome.state, restart).stay_down);
  // restart.probation = 0: only a start that never became ready counts.
  restart.probation = Seconds{0};
  outcome = stops({}, kCrash, restart, Seconds{0}, 50);
  EXPECT_FALSE(decide_start(outcome.state, restart).stay_down);
  EXPECT_TRUE(decide_start(stops({}, kCrash, restart, kNeverReady, 5).state, restart).stay_down);
}

// Crashing under load after 14 minutes of serving, again and again: never given up on. The
// backoff doubles to max_delay and stays there; the failures in a row keep counting; from the
// budget's worth on, it keeps dying (the journal's alert).
TEST(Policy, ADeathAfterServingRestartsForeverWithTheBackoffCapped) {
  auto restart = settings();  // delay 10s, max_delay 5min, budget 5, stable_after 10min default
  restart.stable_after = Seconds{3600};
  SupervisorState state;
  StopOutcome outcome;
  for (int death = 1; death <= 40; ++death) {
    outcome = after_stop(state, kCrash, restart, death * kSecond, 2, 3, Seconds{840});
    state = outcome.state;
    EXPECT_EQ(state.consecutive_failures, death);
    EXPECT_EQ(state.deaths_after_serving, death);
    EXPECT_EQ(failed_starts(state), 0);
    EXPECT_FALSE(outcome.action.starts_with("stay down")) << outcome.action;
    EXPECT_NE(outcome.action.find("(after serving 14min: not counted toward the crash-loop "
                                  "budget; " +
                                  std::to_string(death) + " failure(s) in a row)"),
              std::string::npos)
        << outcome.action;
    EXPECT_EQ(outcome.keeps_dying, death >= 5) << death;
    const auto start = decide_start(state, restart);
    EXPECT_FALSE(start.stay_down) << death;
    EXPECT_EQ(start.delay, backoff_delay(death, restart));
  }
  EXPECT_EQ(decide_start(state, restart).delay, Seconds{300});  // capped at max_delay
  EXPECT_EQ(decide_start(state, restart).reason,
            "backing off 5min after crash (40 failure(s) in a row, the last after serving: not "
            "counted toward the budget)");
  EXPECT_EQ(outcome.action,
            "restart after 5min (after serving 14min: not counted toward the crash-loop budget; "
            "40 failure(s) in a row); keeps dying: 40 failures in a row (restart.budget 5), 40 "
            "after serving");
  // Under the budget it restarts quietly; the fifth is the first to keep dying.
  EXPECT_EQ(after_stop({}, kCrash, restart, 1, 2, 3, Seconds{840}).action,
            "restart after 10s (after serving 14min: not counted toward the crash-loop budget; 1 "
            "failure(s) in a row)");
}

// A start that served ends the run of failed starts: the budget counts them from it again.
TEST(Policy, AStartThatServedEndsTheRunOfFailedStarts) {
  const auto restart = settings();
  auto outcome = stops({}, kCrash, restart, kNeverReady, 4);
  outcome = stops(outcome.state, kCrash, restart, Seconds{900}, 1);  // it served, then died
  EXPECT_EQ(failed_starts(outcome.state), 0);
  EXPECT_EQ(outcome.state.consecutive_failures, 5);  // the backoff remembers them all
  // Five failures in a row, where the old rule stayed down: restarted, and said loudly.
  EXPECT_TRUE(outcome.keeps_dying);
  EXPECT_EQ(decide_start(outcome.state, restart).delay, Seconds{160});
  outcome = stops(outcome.state, kCrash, restart, kNeverReady, 4);
  EXPECT_EQ(failed_starts(outcome.state), 4);
  EXPECT_EQ(decide_start(outcome.state, restart).reason,
            "backing off 5min after crash (failure 4 of 5)");
  outcome = stops(outcome.state, kCrash, restart, Seconds{10}, 1);
  EXPECT_TRUE(decide_start(outcome.state, restart).stay_down);
  // A clean stop after serving past the probation (an operator's `down`) ends the run too.
  auto clean = after_stop(stops({}, kCrash, restart, kNeverReady, 3).state,
                          Classification{ExitClass::clean, "", std::nullopt}, restart, 500, 2, 3,
                          Seconds{600});
  EXPECT_EQ(failed_starts(clean.state), 0);
  EXPECT_EQ(clean.state.consecutive_failures, 3);
}

// The ladder is per class, whatever the budget makes of the stop: an OOM after serving for
// hours still steps the memory knob down, and the service is restarted on the lower setting.
TEST(Policy, AnOomAfterServingStillStepsDown) {
  const auto restart = settings();
  const Classification oom{ExitClass::cuda_oom, "torch.OutOfMemoryError: CUDA out of memory.",
                           MemoryKnob::mem_fraction};
  auto outcome = after_stop({}, oom, restart, 100, 2, 3, Seconds{7200});
  EXPECT_EQ(outcome.state.gpu_level, 1);
  EXPECT_EQ(failed_starts(outcome.state), 0);
  EXPECT_EQ(outcome.action,
            "restart after 10s (after serving 2h: not counted toward the crash-loop budget; 1 "
            "failure(s) in a row); step down to GPU memory level 1");
  const Classification host{ExitClass::host_oom, "oom-kill", std::nullopt};
  outcome = after_stop(outcome.state, host, restart, 200, 2, 3, Seconds{3600});
  EXPECT_EQ(outcome.state.host_level, 1);
  // At the floor it says so, and still restarts.
  outcome = stops(outcome.state, oom, restart, Seconds{3600}, 4);
  EXPECT_EQ(outcome.state.gpu_level, 2);
  EXPECT_NE(outcome.action.find("; GPU memory knobs already at their floor"), std::string::npos)
      << outcome.action;
  EXPECT_FALSE(decide_start(outcome.state, restart).stay_down);
}

// Serving restart.stable_after forgives everything: failures in a row, failed starts, deaths
// after serving; the ladder goes up one level.
TEST(Policy, ServingStableAfterForgivesFailedStartsAndDeathsAfterServing) {
  auto restart = settings();
  restart.stable_after = Seconds{600};
  auto outcome = stops({}, kCrash, restart, Seconds{400}, 6);
  outcome = stops(outcome.state, kCrash, restart, kNeverReady, 2);
  outcome.state.gpu_level = 1;
  EXPECT_EQ(outcome.state.deaths_after_serving, 6);
  EXPECT_EQ(failed_starts(outcome.state), 2);
  auto stable = forgive_if_stable(outcome.state, Seconds{700}, restart, 900 * kSecond);
  ASSERT_TRUE(stable);
  EXPECT_EQ(stable->state.consecutive_failures, 0);
  EXPECT_EQ(stable->state.failures_at_last_serve, 0);
  EXPECT_EQ(stable->state.deaths_after_serving, 0);
  EXPECT_EQ(failed_starts(stable->state), 0);
  EXPECT_EQ(stable->state.gpu_level, 0);
  EXPECT_EQ(stable->action, "forgive 8 failure(s); step up to GPU memory level 0");
}

// A history written before failures_at_last_serve existed: every failure counts, as it did.
TEST(Policy, AnOlderHistoryCountsEveryFailureTowardTheBudget) {
  SupervisorState old;
  old.consecutive_failures = 5;
  old.last_class = "crash";
  EXPECT_EQ(failed_starts(old), 5);
  EXPECT_TRUE(decide_start(old, settings()).stay_down);
  old.failures_at_last_serve = 9;  // a hand-edited file: never below zero
  EXPECT_EQ(failed_starts(old), 0);
}

TEST(Policy, ServedSinceReadyIsThisInvocationsServiceFromReady) {
  EXPECT_EQ(served_since_ready(served_700s(), 900 * kSecond), Seconds{700});
  EXPECT_EQ(served_since_ready({50 * kSecond, 100 * kSecond, 0}, 400 * kSecond), Seconds{300});
  // Never ready in this invocation: nullopt, not zero (a death at READY=1 served 0 s).
  EXPECT_FALSE(served_since_ready({500 * kSecond, 100 * kSecond, 450 * kSecond}, 900 * kSecond));
  EXPECT_FALSE(served_since_ready({}, 900 * kSecond));
  EXPECT_EQ(served_since_ready({100 * kSecond, 100 * kSecond, 100 * kSecond}, 900 * kSecond),
            Seconds{0});
}

}  // namespace
}  // namespace gl
