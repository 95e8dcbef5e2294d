// SPDX-License-Identifier: Apache-2.0
#include "systemd/libsystemd.hpp"

#include <type_traits>
#include <utility>

#include <fmt/core.h>

#include "util/shared_library.hpp"
#include "util/try.hpp"

namespace gl::libsystemd {

#define GL_LIBSYSTEMD_DEFINE(name) decltype(&::name) sym_##name = nullptr;
GL_LIBSYSTEMD_FUNCTIONS(GL_LIBSYSTEMD_DEFINE)
#undef GL_LIBSYSTEMD_DEFINE

namespace {

// The soname the package depends on (libsystemd0); the loader's path finds it, as it would a
// linked library.
constexpr const char* kSoname = "libsystemd.so.0";

Result<void> load_once() {
  GL_TRY(auto library, SharedLibrary::open(kSoname, kSoname));
  // Resolved into locals first: on a missing function no pointer is set, so none is half-loaded.
#define GL_LIBSYSTEMD_RESOLVE(name)                                                        \
  auto* name##_found = library.symbol<std::remove_pointer_t<decltype(sym_##name)>>(#name); \
  if (!name##_found) return failf("Failed to load '{}': it has no function {}", kSoname, #name);
  GL_LIBSYSTEMD_FUNCTIONS(GL_LIBSYSTEMD_RESOLVE)
#undef GL_LIBSYSTEMD_RESOLVE
#define GL_LIBSYSTEMD_SET(name) sym_##name = name##_found;
  GL_LIBSYSTEMD_FUNCTIONS(GL_LIBSYSTEMD_SET)
#undef GL_LIBSYSTEMD_SET
  std::move(library).keep();
  return {};
}

}  // namespace

Result<void> load() {
  static const Result<void> loaded = load_once();
  return loaded;
}

}  // namespace gl::libsystemd
