// SPDX-License-Identifier: Apache-2.0
#pragma once
// TORCH_CUDA_ARCH_LIST as torch's cpp_extension reads it (torch/utils/cpp_extension.py,
// _get_cuda_arch_flags), which is not FlashInfer's grammar (catalog/flashinfer_arch_list):
// - spaces become ';', named architectures ("Ampere", "Blackwell") are expanded, and the value is
//   split on ';';
// - each entry must be one of the release's `supported_arches`, optionally followed by "+PTX";
//   anything else raises ValueError "Unknown CUDA arch (ENTRY) or GPU not supported" while an
//   extension with CUDA sources is built (torch.utils.cpp_extension.load, BuildExtension);
// - an 'a' entry ("9.0a", "12.0a") is a release's own entry; no release has a family ('f')
//   entry, so FlashInfer's "12.0f" fails in every torch. Read in Debian 12's python3-torch
//   1.13.1+dfsg-4 (/usr/lib/python3/dist-packages/torch/utils/cpp_extension.py, up to '8.6'), in
//   pytorch PR #142028 (v2.6: '8.7' ... '9.0a' before it, '10.0' added), PR #145436 (v2.7:
//   '10.0a', '10.1', '10.1a', '12.0', '12.0a'), pytorch main at 0011ec5c (up to '12.0a'), and a
//   later main (Blackwell+Tegra '11.0', '10.3', '12.1' with their 'a' entries, '10.1' gone).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/version.hpp"

namespace gl {

// The profile's toolkit.arch_list (FlashInfer's grammar, "9.0a 12.0f") in torch's: entries joined
// by ';', a family target as its plain architecture (what torch itself derives from such a GPU),
// an 'a' target kept. A value FlashInfer's grammar does not parse is torch's already
// ("8.0;9.0+PTX") or refused by check as FlashInfer's: it is passed unchanged.
std::string torch_arch_list(std::string_view flashinfer_list);

// One entry of torch's grammar, and the releases it was read in: absent in `absent_through` (and
// every release before it that was read), present from `present_from` on.
struct TorchArchRow {
  std::string_view entry;  // "12.0", "9.0a"
  std::string_view absent_through;
  std::string_view present_from;
  std::string_view source;
};
std::span<const TorchArchRow> torch_arch_rows();

// The entries of a torch-grammar list that `torch` is known to refuse (a release at or before the
// row's absent_through); "+PTX" does not change the answer. A release newer than a row's
// absent_through is not judged on it (nothing read says it fails).
struct RefusedTorchArch {
  std::string entry;
  const TorchArchRow* row;
};
std::vector<RefusedTorchArch> torch_refused_arches(std::string_view torch_list,
                                                   const Version& torch);

}  // namespace gl
