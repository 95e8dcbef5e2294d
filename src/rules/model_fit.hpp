// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fit rule's arithmetic, one implementation: whether a model's weights and the KV cache of
// one full-length request fit in the memory share the engine takes on the GPUs holding one copy
// of the model. `check` judges a profile with it (rules/node_checks: model-does-not-fit,
// model-context-capped); `init` proposes the smallest parallelism for which it fits.

#include <optional>
#include <string>
#include <vector>

#include "catalog/engines.hpp"
#include "facts/facts.hpp"

namespace gl {

struct FitInput {
  EngineKind engine = EngineKind::sglang;
  long long tp = 1;
  long long pp = 1;
  long long dp = 1;
  long long ep = 1;
  std::optional<double> mem_fraction;  // engine.mem_fraction; nullopt: the engine's default
  std::vector<const GpuFact*> gpus;    // the GPUs the engine gets; the smallest is judged
  std::optional<long long> context;    // the context it is started with
};

struct FitArithmetic {
  const GpuFact* smallest = nullptr;
  double fraction = 0;
  std::string fraction_source;  // "engine.mem_fraction", or why the engine's default is what it is
  long long copy_gpus = 1;      // tp x pp (x dp for vLLM's expert parallelism)
  double gpu_bytes = 0;
  double usable = 0;     // copy_gpus x gpu_bytes x fraction
  double weights = 0;    // bytes
  double per_token = 0;  // KV cache bytes a token; 0: config.json does not say
  double kv = 0;         // one request of `context` tokens
  double need = 0;       // weights + kv
  bool fits() const { return need <= usable; }
  // GPUs of the smallest's size one copy needs at this share: ceil(need / per-GPU share).
  long long gpus_needed() const;
};

// nullopt where the rule does not judge: no measured weights, an engine whose memory share
// does not cover weights and KV cache together (trtllm-serve, llama.cpp), no GPU memory known.
std::optional<FitArithmetic> fit_arithmetic(const FitInput& input, const ModelFact& model);

// "97.9 GB": how the fit rule's findings and init's proposal print bytes.
std::string fit_gb(double bytes);

}  // namespace gl
