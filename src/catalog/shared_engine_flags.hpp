// SPDX-License-Identifier: Apache-2.0
#pragma once
// Flags SGLang and vLLM spell alike, spelled once for both command lines (engines/): argparse in
// python/sglang/srt/server_args.py (ServerArgs.add_cli_args, sgl-project/sglang 2026) and
// vllm/engine/arg_utils.py (EngineArgs.add_cli_args: ParallelConfig's and ModelConfig's fields,
// vllm-project/vllm 99d7eb5). Each engine's own flags are in its row (catalog/engines).

#include <string_view>

namespace gl {

inline constexpr std::string_view kTensorParallelSizeFlag = "--tensor-parallel-size";
inline constexpr std::string_view kPipelineParallelSizeFlag = "--pipeline-parallel-size";
inline constexpr std::string_view kDataParallelSizeFlag = "--data-parallel-size";
// The model's revision on the hub (model.revision).
inline constexpr std::string_view kModelRevisionFlag = "--revision";

}  // namespace gl
