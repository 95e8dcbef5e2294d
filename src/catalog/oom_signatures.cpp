#include "catalog/oom_signatures.hpp"

#include <array>

namespace gl {

std::span<const OomSignature> cuda_oom_signatures() {
  // field-facts §7; first match wins, so the specific advice comes before the generic torch error.
  static constexpr std::array kSignatures{
      OomSignature{"alloc_req_slots runs out of memory", MemoryKnob::max_requests},
      OomSignature{"Capture cuda graph failed", MemoryKnob::cuda_graph_max_bs},
      OomSignature{"Not enough memory. Please try to increase --mem-fraction-static",
                   MemoryKnob::mem_fraction},
      OomSignature{"No available memory for the cache blocks", MemoryKnob::mem_fraction},
      OomSignature{"is less than desired GPU memory utilization", MemoryKnob::mem_fraction},
      OomSignature{"torch.OutOfMemoryError: CUDA out of memory", MemoryKnob::mem_fraction},
      OomSignature{"torch.cuda.OutOfMemoryError: CUDA out of memory", MemoryKnob::mem_fraction},
      OomSignature{"CUDA error: out of memory", MemoryKnob::mem_fraction},
  };
  return kSignatures;
}

}  // namespace gl
