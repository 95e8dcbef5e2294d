// SPDX-License-Identifier: Apache-2.0
#pragma once
// Profiles held in memory: for the fuzzer and for tests that need no files.

#include <map>

#include "profile/loader.hpp"

namespace gl {

class MemorySource final : public ProfileSource {
 public:
  // `files` maps paths ("/p/k26-ar.toml", "/p/k26-ar.toml.d/10-x.toml") to their text.
  explicit MemorySource(std::map<std::string, std::string> files) : files_(std::move(files)) {}

  std::vector<ProfileEntry> list() const override;
  std::optional<std::filesystem::path> find(std::string_view name,
                                            const std::filesystem::path& near) const override;
  Result<std::string> read(const std::filesystem::path& path) const override;
  std::vector<std::filesystem::path> dropins(const std::filesystem::path& path) const override;

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace gl
