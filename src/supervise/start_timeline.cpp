// SPDX-License-Identifier: Apache-2.0
#include "supervise/start_timeline.hpp"

#include "util/name_table.hpp"

namespace gl {
namespace {

constexpr NameTable<StartPhase, 6> kNames{{
    {StartPhase::process, "process"},
    {StartPhase::weights, "weights"},
    {StartPhase::jit_compile, "jit_compile"},
    {StartPhase::torch_compile, "torch_compile"},
    {StartPhase::cuda_graphs, "cuda_graphs"},
    {StartPhase::health, "health"},
}};

}  // namespace

std::string_view start_phase_name(StartPhase phase) {
  return name_in(kNames, phase, "process");
}

std::optional<StartPhase> start_phase_from_name(std::string_view name) {
  return value_in(kNames, name);
}

}  // namespace gl
