// SPDX-License-Identifier: Apache-2.0
#include "supervise/start_timeline.hpp"

#include "util/name_table.hpp"

namespace gl {
namespace {

constexpr NameTable<Phase, 6> kNames{{
    {Phase::process, "process"},
    {Phase::weights, "weights"},
    {Phase::jit_compile, "jit_compile"},
    {Phase::torch_compile, "torch_compile"},
    {Phase::cuda_graphs, "cuda_graphs"},
    {Phase::health, "health"},
}};

}  // namespace

std::string_view start_phase_name(Phase phase) {
  return name_in(kNames, phase, "process");
}

std::optional<Phase> start_phase_from_name(std::string_view name) {
  return value_in(kNames, name);
}

}  // namespace gl
