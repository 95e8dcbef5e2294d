// SPDX-License-Identifier: Apache-2.0
#include "profile/memory_source.hpp"

namespace gl {
namespace fs = std::filesystem;

std::vector<ProfileEntry> MemorySource::list() const {
  std::vector<ProfileEntry> entries;
  for (const auto& [path, text] : files_) {
    fs::path file{path};
    if (file.extension() == ".toml" && file.parent_path().extension() != ".d")
      entries.push_back({file.stem().string(), file, {}});
  }
  return entries;
}

std::optional<fs::path> MemorySource::find(std::string_view name, const fs::path& near) const {
  for (const auto& [path, text] : files_) {
    fs::path file{path};
    if (file.stem() == name && file.extension() == ".toml" &&
        file.parent_path().extension() != ".d" && (near.empty() || file.parent_path() == near))
      return file;
  }
  if (!near.empty()) return find(name, {});
  return std::nullopt;
}

Result<std::string> MemorySource::read(const fs::path& path) const {
  auto it = files_.find(path.string());
  if (it == files_.end())
    return failf("Failed to open '{}': No such file or directory", path.string());
  return it->second;
}

std::vector<fs::path> MemorySource::dropins(const fs::path& path) const {
  const std::string prefix = path.string() + ".d/";
  std::vector<fs::path> result;
  for (const auto& [file, text] : files_)  // std::map: already in lexical order
    if (file.starts_with(prefix) && file.ends_with(".toml") &&
        file.find('/', prefix.size()) == std::string::npos)
      result.emplace_back(file);
  return result;
}

}  // namespace gl
