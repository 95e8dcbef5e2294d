// SPDX-License-Identifier: Apache-2.0
#pragma once
// A profile's upgrade gate ([gate]): fixed greedy prompts whose answers must stay what they were
// when recorded, and a throughput floor relative to the recorded figure over a bounded load.
// supervise/upgrade_gate measures and judges it.

#include <chrono>
#include <string>
#include <vector>

namespace gl {

struct GateSettings {
  std::vector<std::string> prompts;  // none: the profile has no gate
  int max_tokens = 32;               // per answer; temperature is always 0 (greedy)
  // The share of the recorded answer's words (whitespace-separated) a new answer must repeat
  // from its start: 1.0 is the same text exactly.
  double min_shared_prefix = 1.0;
  // The load's tokens/s must reach this share of the recorded figure.
  double min_throughput = 0.5;
  int requests = 16;                      // the load: this many completions of the prompts, in turn
  int concurrency = 4;                    // at most this many in flight
  std::chrono::seconds max_duration{60};  // the whole gate, answers and load
  int retries = 2;                        // a failed request is sent again up to this many times

  bool enabled() const { return !prompts.empty(); }
};

}  // namespace gl
