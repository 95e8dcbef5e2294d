// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two numbers `run` needs from an engine's Prometheus text exposition (its /metrics): a
// metric's value summed over every label set it carries (vLLM labels each engine core, SGLang
// each tp/dp rank and token mode). Nothing else of the format is interpreted.

#include <optional>
#include <string_view>

namespace gl {

// The sum of the samples named exactly `name` ("vllm:num_requests_running"; with or without
// labels); nullopt when the text has no such sample or none has a value that parses. Comment
// lines (# HELP, # TYPE) and other metrics, "name_bucket" and the like included, are skipped.
std::optional<double> prometheus_sum(std::string_view text, std::string_view name);

}  // namespace gl
