// SPDX-License-Identifier: Apache-2.0
#include "catalog/flashinfer_arch_list.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace gl {
namespace {

constexpr Version kSuffixA{12, 0, 0};         // compute_90a, the first arch-specific target
constexpr Version kSuffixF{12, 9, 0};         // family targets arrived with CUDA 12.9
constexpr Version kFlashInferSm12{12, 9, 0};  // _normalize_cuda_arch's gate for 12.x
constexpr int kFirstSmA = 90;
constexpr int kFirstSmF = 100;

bool digits(std::string_view text, size_t low, size_t high) {
  return text.size() >= low && text.size() <= high &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int number(std::string_view text) {
  int value = 0;
  for (char c : text) value = value * 10 + (c - '0');
  return value;
}

// "12.0f" -> {12.0, 'f'}; nullopt when the entry is not major.minor[a|f].
std::optional<FlashInferArch> parse_entry(std::string_view entry) {
  auto dot = entry.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view major = entry.substr(0, dot);
  std::string_view minor = entry.substr(dot + 1);
  char suffix = 0;
  if (!minor.empty() && (minor.back() == 'a' || minor.back() == 'f')) {
    suffix = minor.back();
    minor.remove_suffix(1);
  }
  if (!digits(major, 1, 2) || !digits(minor, 1, 1)) return std::nullopt;
  return FlashInferArch{{number(major), number(minor)}, suffix};
}

// Why nvcc has no such target; "" when it has.
std::string suffix_problem(const FlashInferArch& arch) {
  const int sm = arch.capability.sm();
  if (arch.suffix == 'a' && sm < kFirstSmA)
    return fmt::format("'{}': nvcc has no arch-specific target below sm_90 (compute_{}a)",
                       arch.text(), sm);
  if (arch.suffix == 'f' && sm < kFirstSmF)
    return fmt::format("'{}': nvcc has no family target below sm_100 (compute_{}f)", arch.text(),
                       sm);
  return "";
}

// The nearest target nvcc has: a dropped suffix, or `a` for a family target below sm_100.
FlashInferArch repaired(FlashInferArch arch) {
  const int sm = arch.capability.sm();
  if (arch.suffix == 'f' && sm < kFirstSmF) arch.suffix = sm >= kFirstSmA ? 'a' : 0;
  if (arch.suffix == 'a' && sm < kFirstSmA) arch.suffix = 0;
  return arch;
}

// The architectures the value meant, in FlashInfer's grammar: any of " ;," separates, "+PTX"
// goes; nullopt when an entry is not an architecture at all.
std::optional<std::string> correct(std::string_view text) {
  std::string out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find_first_of(" ;,", begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view entry = text.substr(begin, end - begin);
    begin = end + 1;
    if (entry.empty()) continue;
    if (entry.ends_with("+PTX")) entry.remove_suffix(4);
    auto arch = parse_entry(entry);
    if (!arch) return std::nullopt;
    out += (out.empty() ? "" : " ") + repaired(*arch).text();
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::string FlashInferArch::text() const {
  std::string out = fmt::format("{}.{}", capability.major, capability.minor);
  if (suffix) out += suffix;
  return out;
}

std::string FlashInferArch::target() const {
  std::string out = fmt::format("compute_{}", capability.sm());
  if (suffix) out += suffix;
  return out;
}

std::expected<std::vector<FlashInferArch>, ArchListError> parse_flashinfer_arch_list(
    std::string_view text) {
  auto error = [&](std::string message) {
    return std::unexpected(ArchListError{std::move(message), correct(text)});
  };
  if (text.empty()) return error("empty (FlashInfer cannot split an empty list)");
  if (auto separator = text.find_first_of(";,"); separator != std::string_view::npos)
    return error(
        fmt::format("entries separated by '{}' (FlashInfer splits the list on single "
                    "spaces only)",
                    text[separator]));
  std::vector<FlashInferArch> entries;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(' ', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view entry = text.substr(begin, end - begin);
    begin = end + 1;
    if (entry.empty())
      return error(
          "an empty entry (FlashInfer splits on each single space: a leading, trailing "
          "or doubled space breaks it)");
    if (entry.ends_with("+PTX")) {
      auto base = parse_entry(entry.substr(0, entry.size() - 4));
      return error(
          fmt::format("'{}': FlashInfer has no +PTX; it passes the entry to nvcc as "
                      "{}+PTX, which nvcc rejects",
                      entry, base ? base->target() : "compute_?"));
    }
    auto arch = parse_entry(entry);
    if (!arch)
      return error(
          fmt::format("'{}' is not an architecture like \"9.0\", \"9.0a\" or \"12.0f\"", entry));
    if (auto problem = suffix_problem(*arch); !problem.empty()) return error(problem);
    entries.push_back(*arch);
  }
  return entries;
}

std::optional<FlashInferArch> flashinfer_target(ComputeCapability capability,
                                                const Version& gate_nvcc) {
  if (capability.major == 12) {
    if (gate_nvcc < kFlashInferSm12) return std::nullopt;
    return FlashInferArch{capability, capability.minor == 0 ? 'f' : 'a'};
  }
  if (capability.major >= 9) return FlashInferArch{capability, 'a'};
  return FlashInferArch{capability, 0};
}

std::optional<Version> min_nvcc_for_target(const FlashInferArch& target) {
  auto needed = min_nvcc_for(target.capability);
  if (!needed) return std::nullopt;
  if (target.suffix == 'a') needed = std::max(*needed, kSuffixA);
  if (target.suffix == 'f') needed = std::max(*needed, kSuffixF);
  return needed;
}

}  // namespace gl
