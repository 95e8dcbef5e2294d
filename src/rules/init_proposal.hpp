// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch init`'s proposal, a pure function of what it was told, the node's facts and what
// facts/discovery found: the engine and its venv, the model, the parallelism that fits (the fit
// rule's arithmetic, rules/model_fit), the toolkit matching torch's CUDA. Each choice with more
// than one answer goes to a Chooser (cli/: prompts on a terminal, or `--yes`, which takes the
// proposal by the rule the choice states); the decision becomes the profile's commented text.

#include <optional>
#include <string>
#include <vector>

#include "catalog/engines.hpp"
#include "facts/discovery.hpp"
#include "facts/facts.hpp"
#include "util/error.hpp"

namespace gl {

struct InitRequest {
  std::string name;
  std::optional<EngineKind> engine{};  // --engine
  std::optional<std::string> venv{};   // --venv
  std::optional<std::string> image{};  // --image: its engine and torch come from the facts
  std::optional<std::string> model{};  // --model: a path or a hub id
  std::vector<std::string> gpus{};     // --gpus: indices or UUIDs
};

// One question: its answers, the one proposed and the rule that proposed it.
struct Choice {
  std::string topic;  // "venv", "model", "parallelism", "toolkit"
  std::vector<std::string> options;
  size_t proposed = 0;
  std::string rule;
};

class Chooser {
 public:
  virtual ~Chooser() = default;
  // The index of the answer taken; called only for a choice with more than one option.
  virtual size_t choose(const Choice& choice) = 0;
};

struct InitDecision {
  std::string name;
  EngineKind engine = EngineKind::sglang;
  std::string engine_version;
  std::string venv;   // empty for an image
  std::string image;  // engine.image, or empty
  std::string venv_why;
  std::optional<std::string> torch;
  std::optional<std::string> torch_cuda;
  std::string model;
  std::string model_why;
  long long tp = 1;
  std::string parallelism_why;
  std::optional<std::string> cuda_home;
  std::string toolkit_why;
  std::vector<std::string> devices;  // gpus.devices as told; empty: the first tp GPUs
};

// The venv-and-engine answers: every venv holding an engine (--engine's only), each engine's
// newest release first, then by path; engines are not ordered by their version numbers.
inline constexpr const char* kVenvRule =
    "within an engine its newest release, then the first by path; across engines, the one whose "
    "profile passes check on this node";
struct EngineOption {
  size_t venv = 0;  // in Discovery::venvs
  EngineKind engine = EngineKind::sglang;
  std::string version;
};
Result<Choice> venv_choice(const InitRequest& request, const Discovery& discovery,
                           std::vector<EngineOption>& answers);

// The models found. Rule: local directories and GGUF files before the hub cache's models, each
// by path.
Result<Choice> model_choice(const InitRequest& request, const Discovery& discovery,
                            std::vector<size_t>& answers);

// The tensor-parallel sizes (powers of two up to the GPUs there are) at which the fit rule says
// the model fits; rule: the smallest. An error when none does, with the arithmetic; one answer,
// tp = 1, when the rule does not judge (no measured weights, an engine whose memory share is not
// judged).
Result<Choice> parallelism_choice(EngineKind engine, const ModelFact& model,
                                  const std::vector<const GpuFact*>& gpus,
                                  std::vector<long long>& answers);

// The toolkits whose nvcc is torch's CUDA (major.minor). Rule: a root that is no link
// (/usr/local/cuda-13.0) before one that is (/usr/local/cuda), then by path. No answer (nullopt
// in `answers`) when torch has no CUDA or no toolkit matches: the rule says which to install.
Choice toolkit_choice(const std::optional<std::string>& torch_cuda,
                      const std::vector<ToolkitFact>& toolkits,
                      std::vector<std::optional<std::string>>& answers);

// Every choice in turn, asked through `chooser` where it has more than one answer.
Result<InitDecision> decide_init(const InitRequest& request, const Facts& facts,
                                 const Discovery& discovery, Chooser& chooser);

// The profile as TOML, each value with a comment saying where it came from.
std::string init_profile_text(const InitDecision& decision);

}  // namespace gl
