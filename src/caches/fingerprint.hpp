// SPDX-License-Identifier: Apache-2.0
#pragma once
// What makes compiled kernels valid. Caches that do not key their entries on these facts must be
// cleared when any of them changes (field-facts sections 1 and 5).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gl {

// Plain strings so any probe can fill them; "" means unknown, which is itself a value: learning
// a fact that was unknown counts as a change.
struct FingerprintInputs {
  std::string toolkit_path;            // CUDA_HOME the unit pins
  std::string toolkit_version;         // "13.0.48"
  std::string driver_version;          // "580.65.06"
  std::vector<std::string> gpu_archs;  // compute capabilities, any order: "12.0"
  std::string torch_version;
  std::string flashinfer_version;
  std::string triton_version;
  std::string engine;  // "sglang", "vllm", "trtllm", "command"
  std::string engine_version;
  std::string arch_list;  // the profile's FLASHINFER_CUDA_ARCH_LIST override
  // engine.image: the image's digest (its id where it has none). Everything the image holds
  // (torch, the engine, its CUDA) changes with it, the caches' entries with them.
  std::string image_digest;
};

// One named fact, for stamps and for saying what changed.
struct FingerprintField {
  std::string name;
  std::string value;
};

// The facts in a fixed order with archs sorted and deduplicated, so equal inputs give equal text.
std::vector<FingerprintField> fingerprint_fields(const FingerprintInputs& inputs);

// A value on one line: '\\' and newline escaped as "\\\\" and "\\n"; unescape_value undoes it and
// refuses any other escape, a raw newline or a NUL (nullopt).
std::string escape_value(std::string_view value);
std::optional<std::string> unescape_value(std::string_view text);

// "name=value" lines in that order, values escaped so each stays on one line.
std::string canonical_text(const std::vector<FingerprintField>& fields);

// 64-bit FNV-1a of the canonical text: a change detector, not a security boundary.
std::uint64_t fingerprint_hash(const FingerprintInputs& inputs);
std::uint64_t fingerprint_hash(const std::vector<FingerprintField>& fields);
std::string fingerprint_hex(std::uint64_t hash);

// "toolkit_version 12.8 -> 13.0, driver_version 570.1 -> 580.6": what differs between two,
// among `only` (field names) when it is not empty. "" when nothing there differs.
std::string describe_changes(const std::vector<FingerprintField>& before,
                             const std::vector<FingerprintField>& after,
                             std::span<const std::string_view> only = {});

}  // namespace gl
