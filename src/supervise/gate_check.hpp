// SPDX-License-Identifier: Apache-2.0
#pragma once
// The upgrade gate's decisions around a running engine (issue 32): whether a profile gates on
// this rank, where the gate asks, the running engine against its record (an outcome, with the
// lines that say it), a new record, and what `up` does with a changed unit's outcome (keep it or
// roll it back). The engine comes in as a GateEngine, the record as GateRecords (a file in the
// state directory, or a fake); cli/ wires the real ones and prints.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "supervise/upgrade_gate.hpp"
#include "util/error.hpp"

namespace gl {

// An error when this rank does not gate: a multi-node group gates once, through rank 0, and a
// profile without [gate] prompts or an engine whose completions API is not in the catalog has
// nothing to gate with.
Result<void> gate_applies(const Profile& profile, const LaunchPlan& plan);

// Where and how the gate asks: the engine's completions path (catalog/completion_api), the served
// model's name, liveness's probe timeout per request and its API key (read by the caller).
GateEndpoint gate_endpoint(const Profile& profile, const LaunchPlan& plan, std::string api_key);

// The running engine, asked the gate's prompts and load: measure_gate() over util/http_client
// (cli/upgrade_gate wires it), or a fake.
class GateEngine {
 public:
  virtual ~GateEngine() = default;
  virtual Result<GateMeasurement> measure(const GateSettings& settings) = 0;
};

// Where a profile's gate record is kept.
class GateRecords {
 public:
  virtual ~GateRecords() = default;
  // nullopt when nothing was recorded; an error when the record cannot be read.
  virtual Result<std::optional<GateRecord>> load() const = 0;
  virtual Result<void> save(const GateRecord& record) = 0;
};

// gate.json in the profile's root-owned state directory (state_paths), or a test's file: read
// without following links and bounded, written atomically, 0600.
class GateRecordFile final : public GateRecords {
 public:
  explicit GateRecordFile(std::filesystem::path path) : path_(std::move(path)) {}
  static GateRecordFile of(std::string_view profile);
  Result<std::optional<GateRecord>> load() const override;
  Result<void> save(const GateRecord& record) override;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

enum class GateOutcome {
  passed,             // answers as recorded, throughput at or above the floor
  failed,             // an answer differs, or the throughput is below the floor
  unanswered,         // the engine did not answer the gate's requests within its bounds
  no_record,          // nothing recorded yet: nothing to compare with
  record_unreadable,  // the record could not be read
};

// "passed", "failed", "unanswered", "no-record", "record-unreadable".
std::string_view gate_outcome_name(GateOutcome outcome);

struct GateCheck {
  GateOutcome outcome = GateOutcome::no_record;
  std::optional<GateRecord> record;
  std::optional<GateMeasurement> measured;  // passed, failed
  double floor = 0;                         // tok/s the load had to reach (passed, failed)
  // failed: one line per failure (judge_gate's); unanswered, record_unreadable: the error.
  std::vector<std::string> failures;

  // The failures in one line, "; " between them (an event's evidence, the journal entry).
  std::string summary() const;
};

// The running engine against the record: the record first (no record: the engine is not asked),
// then the engine, then judge_gate.
GateCheck check_gate(const GateSettings& settings, const GateRecords& records, GateEngine& engine);

// `gate record`: the engine asked now, kept as the record (and returned).
Result<GateRecord> record_gate(const GateSettings& settings, GateRecords& records,
                               GateEngine& engine, int64_t now_usec, std::string engine_version);

// Whether `up` gates the unit it just started: a changed unit of a system service, on rank 0,
// whose profile has a gate the catalog can ask. `note` says why a profile with [gate] prompts is
// not gated ("" when it is, or when nothing changed).
struct UpGate {
  bool run = false;
  std::string note;
};
UpGate up_gates(const Profile& profile, const LaunchPlan& plan, bool unit_changed,
                bool user_manager);

// `up` rolls a changed unit back when it failed its gate or did not answer it; no record (or an
// unreadable one) keeps it, said.
bool gate_rolls_back(const GateCheck& check);

}  // namespace gl
