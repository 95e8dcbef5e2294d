// SPDX-License-Identifier: Apache-2.0
#include "catalog/completion_api.hpp"

namespace gl {
namespace {

// SGLang: python/sglang/srt/entrypoints/openai/protocol.py (sgl-project/sglang 004c82e, 2026):
// CompletionRequest takes model (default "default"), prompt, max_tokens (default 16, must be
// positive) and temperature (default 1.0: the gate sends 0 for greedy answers);
// CompletionResponse has choices[] of CompletionResponseChoice {index, text, ...} and usage:
// UsageInfo {prompt_tokens, completion_tokens, total_tokens}. Served at POST /v1/completions
// (python/sglang/srt/entrypoints/http_server.py).
constexpr CompletionApi kSglang{
    .path = "/v1/completions",
    .source = "python/sglang/srt/entrypoints/openai/protocol.py, sgl-project/sglang 004c82e"};

// vLLM: vllm/entrypoints/openai/completion/protocol.py and api_router.py (vllm-project/vllm
// 002032e / 00cd8fc, 2026; vllm/entrypoints/openai/protocol.py in earlier releases):
// POST /v1/completions, CompletionRequest {model (optional now, required before), prompt,
// max_tokens (default 16), temperature (None: the server's default, 1.0)};
// CompletionResponse {choices: [{index, text, ...}], usage: UsageInfo {completion_tokens}}.
constexpr CompletionApi kVllm{.path = "/v1/completions",
                              .source =
                                  "vllm/entrypoints/openai/completion/protocol.py, api_router.py, "
                                  "vllm-project/vllm 002032e"};

}  // namespace

const CompletionApi* completion_api(EngineKind kind) {
  switch (kind) {
    case EngineKind::sglang:
      return &kSglang;
    case EngineKind::vllm:
      return &kVllm;
    default:
      return nullptr;  // trtllm-serve, llama-server, commands: not verified for the gate
  }
}

}  // namespace gl
