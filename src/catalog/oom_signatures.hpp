// SPDX-License-Identifier: Apache-2.0
#pragma once
// What engines print when the GPU runs out of memory, and which knob that points at. Each engine's
// own lines live in its row of catalog/engines; this file adds torch's and CUDA's, shared by all.

#include <optional>
#include <span>
#include <string_view>

namespace gl {

// What a CUDA OOM message says to change.
enum class MemoryKnob {
  mem_fraction,       // lower the GPU memory share (and the CUDA graphs' batch with it), or the
                      // context where the engine has no share (step_down)
  max_requests,       // lower the requests in flight
  cuda_graph_max_bs,  // lower the largest CUDA graph batch (and the share, which makes room)
  kv_cache_room,      // the share left no room for the KV cache: lowering it makes this worse
};

std::string_view memory_knob_name(MemoryKnob knob);
std::optional<MemoryKnob> parse_memory_knob(std::string_view name);

struct OomSignature {
  std::string_view text;  // substring of one output line
  MemoryKnob knob;
};

// Every engine's OOM lines, then torch's and CUDA's; the config errors' lines last, as
// kv_cache_room, for a stop whose status does not already say "configuration error".
std::span<const OomSignature> cuda_oom_signatures();

// A line after which the same start fails the same way (catalog/engines rows): `run` exits with
// the configuration-error status, which systemd does not restart, and the event gives the fix.
struct ConfigErrorSignature {
  std::string_view text;  // substring of one output line
  std::string_view fix;
};
std::span<const ConfigErrorSignature> engine_config_errors();

// Lines that say a failure an OOM signature matched was no shortage of GPU memory.
std::span<const std::string_view> not_oom_markers();

// The kernel's per-kill summary line ("oom-kill:constraint=...,oom_memcg=...,task_memcg=...").
inline constexpr std::string_view kKernelOomKillMarker = "oom-kill:";

}  // namespace gl
