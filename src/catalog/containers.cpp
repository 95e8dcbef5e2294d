// SPDX-License-Identifier: Apache-2.0
#include "catalog/containers.hpp"

#include <array>

namespace gl {

std::span<const std::string_view> cdi_spec_directories() {
  static constexpr std::array<std::string_view, 2> kDirectories{"/etc/cdi", "/var/run/cdi"};
  return kDirectories;
}

}  // namespace gl
