// SPDX-License-Identifier: Apache-2.0
#include "catalog/torch_arch_list.hpp"

#include <array>

#include "catalog/flashinfer_arch_list.hpp"

namespace gl {
namespace {

constexpr std::string_view kDebian113 =
    "Debian 12 python3-torch 1.13.1+dfsg-4 (torch 1.13.0a0): torch/utils/cpp_extension.py, "
    "supported_arches up to '8.6'";
constexpr std::string_view kPr142028 =
    "pytorch PR #142028 (merged 2024-12-04, v2.6.0): supported_arches had '8.7', '8.9', '9.0', "
    "'9.0a' and gained '10.0'";
constexpr std::string_view kPr145436 =
    "pytorch PR #145436 (merged 2025-01-23, v2.7.0): '10.0a', '10.1', '10.1a', '12.0', '12.0a'; "
    "read at main 0011ec5c";
constexpr std::string_view kLaterMain =
    "pytorch main after #145436 (torch/utils/cpp_extension.py): '10.3', '11.0', '12.1' and their "
    "'a' entries; absent at 0011ec5c";

constexpr std::array kRows{
    TorchArchRow{"8.7", "1.13", "2.6", kPr142028}, TorchArchRow{"8.9", "1.13", "2.6", kPr142028},
    TorchArchRow{"9.0", "1.13", "2.6", kPr142028}, TorchArchRow{"9.0a", "1.13", "2.6", kPr142028},
    TorchArchRow{"10.0", "2.5", "2.6", kPr142028}, TorchArchRow{"10.0a", "2.6", "2.7", kPr145436},
    TorchArchRow{"10.1", "2.6", "2.7", kPr145436}, TorchArchRow{"10.1a", "2.6", "2.7", kPr145436},
    TorchArchRow{"12.0", "2.6", "2.7", kPr145436}, TorchArchRow{"12.0a", "2.6", "2.7", kPr145436},
    TorchArchRow{"10.3", "2.7", "", kLaterMain},   TorchArchRow{"10.3a", "2.7", "", kLaterMain},
    TorchArchRow{"11.0", "2.7", "", kLaterMain},   TorchArchRow{"11.0a", "2.7", "", kLaterMain},
    TorchArchRow{"12.1", "2.7", "", kLaterMain},   TorchArchRow{"12.1a", "2.7", "", kLaterMain},
};

// torch splits on ';' after turning spaces into ';' (empty entries are its own error).
std::vector<std::string> torch_entries(std::string_view list) {
  std::vector<std::string> entries{std::string()};
  for (char c : list) {
    if (c == ' ' || c == ';')
      entries.emplace_back();
    else
      entries.back() += c;
  }
  return entries;
}

}  // namespace

std::string torch_arch_list(std::string_view flashinfer_list) {
  auto parsed = parse_flashinfer_arch_list(flashinfer_list);
  if (!parsed) return std::string(flashinfer_list);
  std::string joined;
  for (const FlashInferArch& arch : *parsed) {
    FlashInferArch torch = arch;
    if (torch.suffix == 'f') torch.suffix = 0;
    if (!joined.empty()) joined += ';';
    joined += torch.text();
  }
  return joined;
}

std::span<const TorchArchRow> torch_arch_rows() {
  return kRows;
}

std::vector<RefusedTorchArch> torch_refused_arches(std::string_view torch_list,
                                                   const Version& torch) {
  std::vector<RefusedTorchArch> refused;
  for (const std::string& entry : torch_entries(torch_list)) {
    std::string_view bare = entry;
    if (bare.ends_with("+PTX")) bare.remove_suffix(4);
    if (bare.empty()) continue;
    for (const TorchArchRow& row : kRows)
      if (row.entry == bare) {
        auto through = parse_version(row.absent_through);
        if (through && Version{torch.major, torch.minor, 0} <= *through)
          refused.push_back({entry, &row});
      }
  }
  return refused;
}

}  // namespace gl
