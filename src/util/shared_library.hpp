// SPDX-License-Identifier: Apache-2.0
#pragma once
// A shared library loaded at run time (dlopen with RTLD_NOW | RTLD_LOCAL): NVML, which a node
// without a driver lacks, and gpulaunch's own archive module. The one owner of <dlfcn.h>.

#include <string>

#include "util/error.hpp"

namespace gl {

class SharedLibrary {
 public:
  // `file` as dlopen takes it: a bare name is searched on the loader's path, anything with a
  // slash is that file. "Failed to load 'shown': <the loader's reason>" when it cannot be.
  static Result<SharedLibrary> open(const std::string& file, const std::string& shown);
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();  // unloads it, unless kept

  // The named function, or null where the library lacks it.
  template <class Function>
  Function* symbol(const char* name) const {
    return reinterpret_cast<Function*>(raw_symbol(name));
  }
  // Never unloaded: what it handed out stays valid for the process's life.
  void keep() && { handle_ = nullptr; }

 private:
  explicit SharedLibrary(void* handle) : handle_(handle) {}
  void* raw_symbol(const char* name) const;
  void* handle_ = nullptr;
};

}  // namespace gl
