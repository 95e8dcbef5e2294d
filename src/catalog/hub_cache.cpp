// SPDX-License-Identifier: Apache-2.0
#include "catalog/hub_cache.hpp"

namespace gl {
namespace {

constexpr std::string_view kModelPrefix = "models--";
constexpr std::string_view kSeparator = "--";

std::optional<std::string> value_of(
    const std::vector<std::pair<std::string, std::string>>& environment, std::string_view name) {
  std::optional<std::string> found;
  for (const auto& [key, value] : environment)
    if (key == name) found = value;
  return found;
}

}  // namespace

std::optional<std::string> hub_cache_directory(
    const std::vector<std::pair<std::string, std::string>>& environment) {
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
    if (auto value = value_of(environment, name); value && !value->empty()) return *value;
  if (auto home = value_of(environment, "HF_HOME"); home && !home->empty()) return *home + "/hub";
  if (auto xdg = value_of(environment, "XDG_CACHE_HOME"); xdg && !xdg->empty())
    return *xdg + "/huggingface/hub";
  if (auto home = value_of(environment, "HOME"); home && !home->empty())
    return *home + "/.cache/huggingface/hub";
  return std::nullopt;
}

std::string hub_repo_folder(const std::string& repo_id) {
  std::string folder = "models";
  size_t start = 0;
  while (true) {
    const size_t slash = repo_id.find('/', start);
    folder += std::string(kSeparator) + repo_id.substr(start, slash - start);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return folder;
}

std::optional<std::string> hub_repo_id(std::string_view folder) {
  if (!folder.starts_with(kModelPrefix)) return std::nullopt;
  std::string_view rest = folder.substr(kModelPrefix.size());
  if (rest.empty()) return std::nullopt;
  std::string id;
  while (true) {
    const size_t separator = rest.find(kSeparator);
    const std::string_view part = rest.substr(0, separator);
    if (part.empty()) return std::nullopt;
    id += (id.empty() ? "" : "/") + std::string(part);
    if (separator == std::string_view::npos) break;
    rest = rest.substr(separator + kSeparator.size());
  }
  return id;
}

}  // namespace gl
