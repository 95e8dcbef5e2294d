// SPDX-License-Identifier: Apache-2.0
// libFuzzer needs edge coverage. clang 14 cannot compile this project (its libstdc++ 12
// <expected> needs C++20 features clang 14 lacks), so the target is built with g++'s
// -fsanitize-coverage=trace-pc,trace-cmp and linked against clang 14's libFuzzer runtime.
// libFuzzer 14 refuses the trace-pc callback, so this file supplies its own: each caller PC is
// hashed into an 8-bit counter table that libFuzzer registers as inline counters. trace-cmp
// callbacks go to libFuzzer's own implementations unchanged.

#include <cstddef>
#include <cstdint>

extern "C" void __sanitizer_cov_8bit_counters_init(uint8_t* start, uint8_t* stop);
extern "C" void __sanitizer_cov_pcs_init(const uintptr_t* begin, const uintptr_t* end);

namespace {

constexpr size_t kSlots = size_t{1} << 16;
alignas(64) uint8_t counters[kSlots];
uintptr_t pc_table[kSlots * 2];  // {pc, flags} pairs; slot numbers stand in for PCs

struct Registration {
  Registration() {
    for (size_t i = 0; i < kSlots; ++i) pc_table[2 * i] = i + 1;
    __sanitizer_cov_8bit_counters_init(counters, counters + kSlots);
    __sanitizer_cov_pcs_init(pc_table, pc_table + 2 * kSlots);
  }
} registration;

}  // namespace

extern "C" __attribute__((no_sanitize_coverage, no_sanitize("address", "undefined"))) void
__sanitizer_cov_trace_pc() {
  auto pc = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  uintptr_t hash = (pc ^ (pc >> 17)) * 0x9E3779B97F4A7C15ull;
  ++counters[hash >> 48];
}

// g++ also traces floating-point comparisons, which libFuzzer has no hooks for.
extern "C" __attribute__((no_sanitize_coverage)) void __sanitizer_cov_trace_cmpf(float, float) {}
extern "C" __attribute__((no_sanitize_coverage)) void __sanitizer_cov_trace_cmpd(double, double) {}
