// SPDX-License-Identifier: Apache-2.0
#pragma once
// A unit property as StartTransientUnit takes it: a name and a value of one of the D-Bus types
// systemd's unit properties use (org.freedesktop.systemd1(5)).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gl {

// (bas): an allow list (true) or a deny list ("~"), as RestrictAddressFamilies= and
// SystemCallFilter= take.
struct BusFilter {
  bool allow = true;
  std::vector<std::string> entries;
  bool operator==(const BusFilter&) const = default;
};
using BusPairs = std::vector<std::pair<std::string, std::string>>;  // a(ss)
// (ssbt) each, as BindPaths= takes them: source, destination, ignore a missing source, mount
// flags (MS_REC for a recursive bind, systemd's default).
struct BusBind {
  std::string source;
  std::string destination;
  bool ignore_missing = false;
  uint64_t flags = 0;
  bool operator==(const BusBind&) const = default;
};
using BusBinds = std::vector<BusBind>;

// s, b, t, i, u, as, a(ss), (bas), a(ssbt), in this order (bus_signature).
using BusValue = std::variant<std::string, bool, uint64_t, int32_t, uint32_t,
                              std::vector<std::string>, BusPairs, BusFilter, BusBinds>;

inline std::string_view bus_signature(const BusValue& value) {
  constexpr std::string_view kSignatures[] = {"s",  "b",     "t",     "i",      "u",
                                              "as", "a(ss)", "(bas)", "a(ssbt)"};
  return kSignatures[value.index()];
}

struct BusProperty {
  std::string name;
  BusValue value;
  bool operator==(const BusProperty&) const = default;
};

}  // namespace gl
