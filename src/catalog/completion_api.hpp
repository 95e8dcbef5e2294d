// SPDX-License-Identifier: Apache-2.0
#pragma once
// The OpenAI-compatible completions endpoint the upgrade gate asks (supervise/upgrade_gate): its
// path, and the fields gpulaunch writes and reads, per engine, with the upstream source.
// Request: {"model", "prompt", "max_tokens", "temperature": 0}; answer: choices[0].text and
// usage.completion_tokens.

#include <string_view>

#include "catalog/engines.hpp"

namespace gl {

struct CompletionApi {
  std::string_view path;
  std::string_view source;
};

// nullptr: gpulaunch has not verified this engine's completions API (the gate refuses it).
const CompletionApi* completion_api(EngineKind kind);

}  // namespace gl
