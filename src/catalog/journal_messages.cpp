// SPDX-License-Identifier: Apache-2.0
#include "catalog/journal_messages.hpp"

#include <array>

#include <fmt/core.h>

namespace gl {
namespace {

// IDs made once with python3 -c 'import uuid; print(uuid.uuid4().hex)'; never change one: it
// is how a journal reader matches the event across versions.
constexpr std::array<JournalMessage, 24> kMessages{{
    // The exit classes (supervise/exit_class's names), as record-exit classifies a stop.
    {"clean", "a1a78217f62347f5a78fa87d8aef154a", "gpulaunch engine stopped cleanly",
     "The engine of profile @GPULAUNCH_PROFILE@ stopped on request, or exited with status 0.\n"
     "Nothing counts against the crash-loop budget."},
    {"host-oom", "0a4b68a8ba054ae3a784c31a33feba70",
     "gpulaunch engine killed by the host's OOM killer",
     "The kernel's OOM killer ended a process of profile @GPULAUNCH_PROFILE@ (its cgroup's\n"
     "memory limit, service.memory_max, or the host's memory ran out).\n\n"
     "With restart.step_down = true the next start lowers the engine's concurrency\n"
     "(engine.max_requests); otherwise lower engine.max_requests or raise\n"
     "service.memory_max. The evidence and the action taken: gpulaunch events\n"
     "@GPULAUNCH_PROFILE@"},
    {"cuda-oom", "421aa22f86884d10b197e2d02d4b3ccf", "gpulaunch engine ran out of GPU memory",
     "The engine of profile @GPULAUNCH_PROFILE@ stopped after its own CUDA out-of-memory\n"
     "message.\n\n"
     "With restart.step_down = true the next start lowers the knob the message points at\n"
     "(engine.mem_fraction, engine.max_requests or engine.cuda_graph_max_bs) within bounds;\n"
     "otherwise lower it in the profile and run gpulaunch up @GPULAUNCH_PROFILE@. The message,\n"
     "the knob and the action taken: gpulaunch events @GPULAUNCH_PROFILE@"},
    {"hang", "e7d67f2c77b1462c9a0c3e74f4f42b06", "gpulaunch engine stopped answering health",
     "systemd's watchdog fired: the engine of profile @GPULAUNCH_PROFILE@ stopped answering its\n"
     "health endpoint for server.watchdog while alive, and was killed.\n\n"
     "It is restarted by the restart policy. Its last lines: gpulaunch logs\n"
     "@GPULAUNCH_PROFILE@"},
    {"start-timeout", "537b3e1f815f4f7682303d0e010da8fe", "gpulaunch engine did not become ready",
     "The engine of profile @GPULAUNCH_PROFILE@ did not answer its health endpoint within\n"
     "server.ready_timeout, and loading progress no longer pushed the deadline back.\n\n"
     "Raise server.ready_timeout for a model that loads slowly; the last phase it reached is in\n"
     "gpulaunch events @GPULAUNCH_PROFILE@"},
    {"config-error", "32b4a2faab1a484eaf5fa2c4f3deaff9",
     "gpulaunch engine rejected its configuration",
     "The engine of profile @GPULAUNCH_PROFILE@ refused its command line or configuration. The\n"
     "same start would fail the same way, so it is not retried.\n\n"
     "Fix the profile (the engine's message and its fix: gpulaunch events\n"
     "@GPULAUNCH_PROFILE@), then run gpulaunch up @GPULAUNCH_PROFILE@."},
    {"setup-failure", "f5f20fe8016d49f2ac130c0ff9f79ec3",
     "systemd could not set up the gpulaunch unit",
     "systemd could not set up the sandbox or environment of profile @GPULAUNCH_PROFILE@'s unit\n"
     "(an exit status 200-244). A retry would fail the same way; it is not retried.\n\n"
     "systemd's own message: journalctl -u gpulaunch-@GPULAUNCH_PROFILE@.service; the stop:\n"
     "gpulaunch events @GPULAUNCH_PROFILE@"},
    {"crash-loop", "7c1774138c8945bf8302a3600df96214", "gpulaunch engine stays down: crash loop",
     "restart.budget starts of profile @GPULAUNCH_PROFILE@ in a row failed to serve (never\n"
     "ready, or died within restart.probation of ready), so gpulaunch run refused to start its\n"
     "engine again. An engine that dies after serving longer is restarted, however often.\n\n"
     "Find the cause in gpulaunch events @GPULAUNCH_PROFILE@, fix it, then run\n"
     "gpulaunch restart @GPULAUNCH_PROFILE@."},
    {"gpu-residue", "2d430c0e26d5408f856b82e72f654abb",
     "gpulaunch engine not started: GPU memory held",
     "Other processes kept holding memory on the GPUs of profile @GPULAUNCH_PROFILE@, so the\n"
     "engine was not started into an out-of-memory.\n\n"
     "The processes are named in gpulaunch logs @GPULAUNCH_PROFILE@ (GPU residue lines); end\n"
     "them, or check nvidia-smi."},
    {"stalled", "69618e42c5c240b685ec9e6db0579780", "gpulaunch engine made no forward progress",
     "The engine of profile @GPULAUNCH_PROFILE@ kept answering but finished no token for\n"
     "server.liveness_timeout (server.liveness). gpulaunch run asked every engine process for\n"
     "its Python thread stacks, then killed it; the restart policy applies.\n\n"
     "The thread dump follows the stall line in the unit's journal; gpulaunch events\n"
     "@GPULAUNCH_PROFILE@ prints the journalctl --cursor= command that shows it."},
    {"crash", "2781f429945f4323babd3e04339e8bd8", "gpulaunch engine crashed",
     "The engine of profile @GPULAUNCH_PROFILE@ ended with a failure gpulaunch has no more\n"
     "specific name for. The restart policy applies.\n\n"
     "Its last lines: gpulaunch logs @GPULAUNCH_PROFILE@; the stop: gpulaunch events\n"
     "@GPULAUNCH_PROFILE@"},
    // gpulaunch run's own events.
    {kReadyMessage, "4cd8d905dd7d462387765847ceeabc6f", "gpulaunch engine is serving",
     "The engine of profile @GPULAUNCH_PROFILE@ answered its health endpoint (or generated a\n"
     "token, server.ready = \"generate\"), and gpulaunch run told systemd READY=1."},
    {kPhaseMessage, "7960ba56474f4cc892195a25ac395263", "gpulaunch engine start phase",
     "The engine of profile @GPULAUNCH_PROFILE@ entered start phase @GPULAUNCH_PHASE@. The\n"
     "phases of the last start and their durations: gpulaunch status @GPULAUNCH_PROFILE@"},
    {kStallMessage, "ddb5bd18eaee4938a6b652ec896319a4", "gpulaunch found no forward progress",
     "gpulaunch run saw no forward progress from the engine of profile @GPULAUNCH_PROFILE@ for\n"
     "server.liveness_timeout. Every engine process now writes its Python thread stacks to the\n"
     "journal (the lines after this one), then the engine is killed.\n\n"
     "The dump: the journalctl --cursor= command in gpulaunch events @GPULAUNCH_PROFILE@"},
    {kStepDownMessage, "88f9517a638c47bb91865298d70d9faa",
     "gpulaunch lowered the engine's memory knobs",
     "After out-of-memory stops of profile @GPULAUNCH_PROFILE@ (restart.step_down = true), this\n"
     "start runs with a memory or concurrency knob lowered from the engine's own default.\n\n"
     "The step-up follows after restart.stable_after of serving; to pin a value, set it in the\n"
     "profile. The stops that caused it: gpulaunch events @GPULAUNCH_PROFILE@"},
    {kBackOffMessage, "5efd2db6f143439b85d833e2784f16e9",
     "gpulaunch waits before restarting the engine",
     "Profile @GPULAUNCH_PROFILE@ failed recently, so this start waits (restart.delay, doubling\n"
     "up to restart.max_delay) before the engine starts.\n\n"
     "The failures: gpulaunch events @GPULAUNCH_PROFILE@; gpulaunch restart\n"
     "@GPULAUNCH_PROFILE@ starts at once."},
    {kCrashLoopStopMessage, "d3d35235ebb9401a933786ed007a49f0",
     "gpulaunch refused to start the engine",
     "gpulaunch run stays down for profile @GPULAUNCH_PROFILE@: its crash-loop budget\n"
     "(restart.budget) is spent, or a stop could not be recorded.\n\n"
     "Fix the cause (gpulaunch events @GPULAUNCH_PROFILE@), then run gpulaunch restart\n"
     "@GPULAUNCH_PROFILE@."},
    {kStableMessage, "f3f9954818ad48b1ac05b5299200e2b1", "gpulaunch forgave earlier failures",
     "The engine of profile @GPULAUNCH_PROFILE@ served for restart.stable_after: earlier failures\n"
     "no longer count, and stepped-down knobs go back up one level at the next start."},
    {kKeepsDyingMessage, "409a845092d142e7b815a3e58f6b0a22",
     "gpulaunch engine keeps dying after serving",
     "The engine of profile @GPULAUNCH_PROFILE@ died again after serving past\n"
     "restart.probation, and its failures in a row reached restart.budget. A start that served\n"
     "is never given up on: it is restarted after the backoff (restart.delay doubling up to\n"
     "restart.max_delay), forever, until it serves restart.stable_after. This entry has priority\n"
     "err (3), for an alert: journalctl -p err MESSAGE_ID=409a845092d142e7b815a3e58f6b0a22, or\n"
     "the metric gpulaunch_deaths_after_serving.\n\n"
     "Each death and its class: gpulaunch events @GPULAUNCH_PROFILE@; the last lines before\n"
     "it: gpulaunch logs @GPULAUNCH_PROFILE@"},
    {kOperatorResetMessage, "cac47468a5f74a5aad11b472967f8220",
     "gpulaunch history reset by an operator",
     "gpulaunch restart or up on profile @GPULAUNCH_PROFILE@ ended its crash loop: the failure\n"
     "count and the backoff start over."},
    {kStartedMessage, "80505b57c8a74bb6b0531cfa390d64e2", "gpulaunch engine start completed",
     "A start of profile @GPULAUNCH_PROFILE@'s engine became ready. Where its time went (weights,\n"
     "JIT, torch.compile, CUDA graphs): gpulaunch status @GPULAUNCH_PROFILE@ and gpulaunch events\n"
     "--json @GPULAUNCH_PROFILE@"},
    {kCacheQuarantinedMessage, "544a06808f6d49d7b7e6d349101a48f1",
     "gpulaunch quarantined a poisoned cache",
     "A stop of profile @GPULAUNCH_PROFILE@ named a file inside one of its caches, so that cache\n"
     "was moved aside (kept for inspection) and the engine retried once.\n\n"
     "Where it went: gpulaunch events @GPULAUNCH_PROFILE@"},
    {kRolledBackMessage, "65fcf9dde3434e7a8a4b90ba0eadf2ed",
     "gpulaunch rolled back a change that did not become ready",
     "gpulaunch up installed a changed unit for profile @GPULAUNCH_PROFILE@ that did not become\n"
     "ready, so it put the previous unit and profile snapshot back and restarted the previous\n"
     "version if it was running.\n\n"
     "Why the change failed: gpulaunch events @GPULAUNCH_PROFILE@ and gpulaunch logs\n"
     "@GPULAUNCH_PROFILE@. Fix the profile and run gpulaunch up again, or pass --no-rollback to\n"
     "keep a failed change for inspection."},
    {kGateFailedMessage, "eab1b51b6e914994a59bdf70cce2c455",
     "gpulaunch rolled back a change that failed its upgrade gate",
     "gpulaunch up installed a changed unit for profile @GPULAUNCH_PROFILE@ that became ready but\n"
     "no longer answered the profile's [gate] prompts as recorded, or fell below its throughput\n"
     "floor, so it put the previous unit and profile snapshot back and restarted the previous\n"
     "version if it was running. The entry names the prompt that differs and where, or the\n"
     "throughput measured against the floor.\n\n"
     "Run gpulaunch verify --gate to ask the running engine again; gpulaunch gate record\n"
     "@GPULAUNCH_PROFILE@ records a new expectation once a change in the answers is intended."},
}};

}  // namespace

std::span<const JournalMessage> journal_messages() {
  return kMessages;
}

std::optional<JournalMessage> journal_message(std::string_view kind) {
  for (const JournalMessage& message : kMessages)
    if (message.kind == kind) return message;
  return std::nullopt;
}

std::string journal_catalog() {
  std::string text =
      "# gpulaunch's journal messages (journalctl -x). Generated by `gpulaunch internal-catalog`\n"
      "# from src/catalog/journal_messages.cpp; do not edit.\n";
  for (const JournalMessage& message : kMessages)
    text += fmt::format("\n-- {}\nSubject: {}\nDefined-By: gpulaunch\n\n{}\n", message.id,
                        message.subject, message.text);
  return text;
}

}  // namespace gl
