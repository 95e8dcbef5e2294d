#include "catalog/oom_signatures.hpp"

#include <array>
#include <utility>

#include "util/name_table.hpp"

namespace gl {

std::span<const OomSignature> cuda_oom_signatures() {
  // field-facts §7; first match wins, so the specific advice comes before the generic torch error.
  static constexpr std::array kSignatures{
      OomSignature{"alloc_req_slots runs out of memory", MemoryKnob::max_requests},
      OomSignature{"Capture cuda graph failed", MemoryKnob::cuda_graph_max_bs},
      // Weights loaded, but the static share leaves nothing for the KV cache: SGLang and vLLM
      // both advise a larger share; a smaller one would fail the same way sooner.
      OomSignature{"Not enough memory. Please try to increase --mem-fraction-static",
                   MemoryKnob::kv_cache_room},
      OomSignature{"No available memory for the cache blocks", MemoryKnob::kv_cache_room},
      OomSignature{"is less than desired GPU memory utilization", MemoryKnob::mem_fraction},
      OomSignature{"torch.OutOfMemoryError: CUDA out of memory", MemoryKnob::mem_fraction},
      OomSignature{"torch.cuda.OutOfMemoryError: CUDA out of memory", MemoryKnob::mem_fraction},
      OomSignature{"CUDA error: out of memory", MemoryKnob::mem_fraction},
  };
  return kSignatures;
}

namespace {
constexpr NameTable<MemoryKnob, 4> kKnobNames{{
    {MemoryKnob::mem_fraction, "mem-fraction"},
    {MemoryKnob::max_requests, "max-requests"},
    {MemoryKnob::cuda_graph_max_bs, "cuda-graph-max-bs"},
    {MemoryKnob::kv_cache_room, "kv-cache-room"},
}};
}  // namespace

std::string_view memory_knob_name(MemoryKnob knob) {
  return name_in(kKnobNames, knob, "mem-fraction");
}

std::optional<MemoryKnob> parse_memory_knob(std::string_view name) {
  return value_in(kKnobNames, name);
}

}  // namespace gl
