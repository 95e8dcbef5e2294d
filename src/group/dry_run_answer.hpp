// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a node's `up --dry-run --json` answers: what its `up` would do and what the check says.
// One line of JSON that `up` writes and `up --all-nodes` reads from every rank: the keys are
// spelled here once, for both.

#include <string>

#include <nlohmann/json.hpp>

#include "supervise/unit_transition.hpp"
#include "util/error.hpp"

namespace gl {

struct DryRunAnswer {
  std::string profile;
  std::string unit;
  std::string path;
  UnitAction action = UnitAction::start;
  bool unit_changed = false;  // the rendered unit differs from the installed one
  std::string diff;           // unified, when it differs
  long long check_errors = 0;
  long long check_warnings = 0;
  bool refuse = false;  // `up` would refuse on the check (errors, no --force, something to do)
};

std::string_view unit_action_name(UnitAction action);

nlohmann::ordered_json dry_run_json(const DryRunAnswer& answer);

// The answer's members, read from `json` (a rank's entry may carry more, e.g. its rank and host):
// one that is missing or of the wrong type is an error naming it.
Result<DryRunAnswer> read_dry_run_answer(const nlohmann::ordered_json& json);

}  // namespace gl
