#pragma once
// What engines print when the GPU runs out of memory, and which knob that points at. A table, so
// a new engine message is one line here and one case in the tests.

#include <span>
#include <string_view>

namespace gl {

// The engine setting a CUDA OOM message says to lower.
enum class MemoryKnob { mem_fraction, max_requests, cuda_graph_max_bs };

struct OomSignature {
  std::string_view text;  // substring of one output line
  MemoryKnob knob;
};

std::span<const OomSignature> cuda_oom_signatures();

// The kernel's per-kill summary line ("oom-kill:constraint=...,oom_memcg=...,task_memcg=...").
inline constexpr std::string_view kKernelOomKillMarker = "oom-kill:";

}  // namespace gl
