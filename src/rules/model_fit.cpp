// SPDX-License-Identifier: Apache-2.0
#include "rules/model_fit.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "catalog/node_requirements.hpp"

namespace gl {

long long FitArithmetic::gpus_needed() const {
  const double per_gpu = gpu_bytes * fraction;
  return per_gpu > 0 ? static_cast<long long>(std::ceil(need / per_gpu)) : 0;
}

std::string fit_gb(double bytes) {
  return fmt::format("{:.1f} GB", bytes / 1e9);
}

std::optional<FitArithmetic> fit_arithmetic(const FitInput& input, const ModelFact& model) {
  if (!model.weights_bytes) return std::nullopt;
  const EngineRow& row = engine_row(input.engine);
  // Only a share that covers weights and KV cache together (SGLang's, vLLM's) is judged.
  if (!row.mem_fraction.engine_default) return std::nullopt;
  if (input.gpus.empty()) return std::nullopt;
  FitArithmetic fit;
  fit.smallest = *std::ranges::min_element(
      input.gpus, {}, [](const GpuFact* gpu) { return gpu->memory_total_mib; });
  if (fit.smallest->memory_total_mib == 0) return std::nullopt;
  if (input.mem_fraction) {
    fit.fraction = *input.mem_fraction;
    fit.fraction_source = "engine.mem_fraction";
  } else {
    auto chosen = knob_default(
        row.mem_fraction,
        GpuContext{fit.smallest->memory_total_mib, fit.smallest->name, input.tp, input.pp});
    if (!chosen) return std::nullopt;
    fit.fraction = chosen->value;
    fit.fraction_source = chosen->why;
  }
  // The GPUs holding one copy of the model: tp x pp; vLLM's expert parallelism also spreads the
  // experts, most of a MoE's weights, over the data-parallel ranks.
  fit.copy_gpus = input.tp * input.pp;
  if (row.ep_rule == EpRule::one_or_tp_times_dp && input.ep > 1) fit.copy_gpus *= input.dp;
  fit.gpu_bytes = static_cast<double>(fit.smallest->memory_total_mib) * 1024 * 1024;
  fit.usable = static_cast<double>(fit.copy_gpus) * fit.gpu_bytes * fit.fraction;
  fit.weights = static_cast<double>(*model.weights_bytes);
  if (model.layers && model.kv_lora_rank && model.rope_head_dim)  // MLA: one latent per token
    fit.per_token =
        static_cast<double>(*model.layers * (*model.kv_lora_rank + *model.rope_head_dim) *
                            static_cast<long long>(kKvCacheElementBytes));
  else if (model.layers && model.kv_heads && model.head_dim)
    fit.per_token = static_cast<double>(*model.layers * 2 * *model.kv_heads * *model.head_dim *
                                        static_cast<long long>(kKvCacheElementBytes));
  fit.kv = input.context ? fit.per_token * static_cast<double>(*input.context) : 0;
  fit.need = fit.weights + fit.kv;
  return fit;
}

}  // namespace gl
