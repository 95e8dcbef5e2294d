// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kinds of event gpulaunch writes to the journal, each with its fixed MESSAGE_ID= and the
// journal catalog entry (`journalctl -x`) that explains it and its fix. The catalog file the
// package installs (/usr/lib/systemd/catalog/gpulaunch.catalog) is generated from this table by
// the hidden `gpulaunch internal-catalog`, so the IDs are spelled here once.
// Catalog format: systemd's catalog/systemd.catalog.in (v252): "-- ID" opens an entry, header
// lines follow ("Subject:", "Defined-By:", ...), then a blank line and the text, in which
// @FIELD@ is replaced with the entry's own field.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gl {

struct JournalMessage {
  // The exit classes use supervise/exit_class's names ("cuda-oom"); the others the constants
  // below, which the history's event kinds are too.
  std::string_view kind;
  std::string_view id;  // 32 lowercase hex digits: a 128-bit ID made once (python uuid4().hex)
  std::string_view subject;
  std::string_view text;  // the explanation and the fix; may name @GPULAUNCH_PROFILE@
};

// Kinds that are no exit class.
inline constexpr std::string_view kReadyMessage = "ready";         // the engine serves
inline constexpr std::string_view kPhaseMessage = "phase";         // a start phase began
inline constexpr std::string_view kStallMessage = "stall";         // run's stall line
inline constexpr std::string_view kStepDownMessage = "step-down";  // knobs lowered at a start
inline constexpr std::string_view kBackOffMessage = "back-off";    // a start waits first
inline constexpr std::string_view kCrashLoopStopMessage = "crash-loop-stop";  // run stays down
inline constexpr std::string_view kStableMessage = "stable";  // earlier failures forgiven
// a death after serving, restarted although restart.budget failures came in a row
inline constexpr std::string_view kKeepsDyingMessage = "keeps-dying";
inline constexpr std::string_view kOperatorResetMessage = "operator-reset";  // restart/up reset
inline constexpr std::string_view kCacheQuarantinedMessage = "cache-quarantined";
inline constexpr std::string_view kStartedMessage = "started";         // a start became ready
inline constexpr std::string_view kRolledBackMessage = "rolled-back";  // up put the previous back
// up rolled back a change that became ready but failed its upgrade gate
inline constexpr std::string_view kGateFailedMessage = "gate-failed";

std::span<const JournalMessage> journal_messages();
// The row of `kind`; nullopt for a kind the table lacks.
std::optional<JournalMessage> journal_message(std::string_view kind);
// The catalog file: every row, in the table's order.
std::string journal_catalog();

}  // namespace gl
