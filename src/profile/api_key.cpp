// SPDX-License-Identifier: Apache-2.0
#include "profile/api_key.hpp"

#include <fmt/format.h>

#include "profile/secret_files.hpp"

namespace gl {
namespace {

// The value of `flag` at argv[i] ("--flag=VALUE", or "--flag" and the next word); nullopt when
// argv[i] is not that flag.
std::optional<std::string> flag_value(const std::vector<std::string>& argv, size_t i,
                                      std::string_view flag) {
  const std::string& word = argv[i];
  if (word == flag) return i + 1 < argv.size() ? argv[i + 1] : std::string();
  if (word.size() > flag.size() && word.starts_with(flag) && word[flag.size()] == '=')
    return word.substr(flag.size() + 1);
  return std::nullopt;
}

}  // namespace

ApiKeyUse find_api_key(const ApiKeyFacts& facts, const std::vector<std::string>& argv,
                       const Profile& profile) {
  // Each source the engine would read; a key is usable only where [secrets] is the one source
  // (two sources may hold two keys, and the probe cannot tell which one the engine took).
  std::vector<ApiKeyUse> sources;
  for (size_t i = 0; i < argv.size(); ++i) {
    for (std::string_view flag : facts.flags)
      if (flag_value(argv, i, flag))
        sources.push_back({true, fmt::format("{} in the engine's command line", flag), {}, {}});
    for (std::string_view flag : facts.file_flags)
      if (auto file = flag_value(argv, i, flag)) {
        ApiKeyUse use{true, fmt::format("{} {}", flag, *file), {}, {}};
        for (const auto& [name, path] : profile.secrets)
          if (*file == credential_path(profile, name)) use.credential = name;
        sources.push_back(use);
      }
    if (!facts.config_flag.empty())
      if (auto file = flag_value(argv, i, facts.config_flag))
        sources.push_back(
            {true,
             fmt::format("{} {}, which gpulaunch does not read", facts.config_flag, *file),
             {},
             {}});
  }
  for (std::string_view variable : facts.variables) {
    const std::string name(variable);
    if (profile.env.contains(name))
      sources.push_back({true, fmt::format("{} in [env]", name), {}, {}});
    if (profile.secrets.contains(name))
      sources.push_back({true, fmt::format("{} in [secrets]", name), name, name});
  }
  if (sources.empty()) return {};
  if (sources.size() == 1) return sources.front();
  ApiKeyUse mixed{true, "", {}, {}};
  for (const auto& source : sources)
    mixed.where += (mixed.where.empty() ? "" : " and ") + source.where;
  return mixed;
}

}  // namespace gl
