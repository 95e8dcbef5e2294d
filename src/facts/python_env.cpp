// SPDX-License-Identifier: Apache-2.0
#include "facts/python_env.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "catalog/discovery_places.hpp"
#include "catalog/engines.hpp"
#include "catalog/flashinfer_packages.hpp"

namespace gl {
namespace {

struct WatchedPackage {
  std::string dist;      // normalised dist-info name
  std::string_view key;  // name in PythonEnvFact::packages
};

// Dist names differ from what the rules call them: flashinfer ships as flashinfer-python.
// The engines' own packages come from their rows in catalog/engines.
const std::vector<WatchedPackage>& watched_packages() {
  static const std::vector<WatchedPackage> kPackages = [] {
    std::vector<WatchedPackage> all{{"torch", "torch"},
                                    {"flashinfer_python", "flashinfer"},
                                    {"flashinfer", "flashinfer"},
                                    {"triton", "triton"}};
    for (const FlashInferCompanion& row : flashinfer_companions())
      all.push_back(WatchedPackage{std::string(row.dist), row.dist});
    for (const EngineRow& row : engine_rows())
      if (!row.pip_dist.empty())
        all.push_back(WatchedPackage{normalise_dist_name(row.pip_dist), row.import_module});
    return all;
  }();
  return kPackages;
}

const std::vector<std::string_view>& watched_modules() {
  static const std::vector<std::string_view> kModules = [] {
    // flashinfer_cubin: its cubins are read only when FLASHINFER_CUBIN_DIR is unset.
    std::vector<std::string_view> all{"torch", "flashinfer", "flashinfer_cubin"};
    for (const EngineRow& row : engine_rows())
      if (!row.import_module.empty()) all.push_back(row.import_module);
    return all;
  }();
  return kModules;
}

std::optional<std::string> quoted_value(const std::string& line) {
  auto equals = line.find('=');
  if (equals == std::string::npos) return std::nullopt;
  auto rest = line.substr(equals + 1);
  auto open = rest.find_first_of("'\"");
  if (open == std::string::npos) return std::nullopt;
  auto close = rest.find(rest[open], open + 1);
  if (close == std::string::npos) return std::nullopt;
  return rest.substr(open + 1, close - open - 1);
}

std::string assigned_name(const std::string& line) {
  size_t end = 0;
  while (end < line.size() &&
         (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_'))
    ++end;
  return line.substr(0, end);
}

// An interpreter's own prefix (not a venv): every python3* library directory it has.
std::vector<std::string> prefix_site_packages(const NodeFs& node, const std::string& prefix) {
  std::vector<std::string> found;
  for (const auto& library : {prefix + "/lib", prefix + "/local/lib"})
    for (const auto& name : node.list(library)) {
      if (name.rfind("python3", 0) != 0) continue;
      for (std::string_view leaf : {"site-packages", "dist-packages"})
        if (node.is_directory(library + "/" + name + "/" + std::string(leaf)))
          found.push_back(library + "/" + name + "/" + std::string(leaf));
    }
  return found;
}

}  // namespace

TorchVersion parse_torch_version_py(std::string_view text) {
  TorchVersion result;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    auto name = assigned_name(line);
    if (name == "__version__")
      result.version = quoted_value(line);
    else if (name == "cuda")
      result.cuda = quoted_value(line);  // `cuda = None` stays nullopt
  }
  return result;
}

std::optional<std::string> parse_metadata_version(std::string_view text) {
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line == "\r") break;  // headers end at the first blank line
    if (line.rfind("Version:", 0) == 0) {
      auto value = line.substr(8);
      auto begin = value.find_first_not_of(" \t");
      auto end = value.find_last_not_of(" \t\r");
      if (begin != std::string::npos) return value.substr(begin, end - begin + 1);
    }
  }
  return std::nullopt;
}

std::string normalise_dist_name(std::string_view name) {
  std::string result;
  for (char c : name) {
    if (c == '-' || c == '.' || c == '_') {
      if (result.empty() || result.back() != '_') result += '_';
    } else {
      result += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return result;
}

VenvConfig parse_pyvenv_cfg(std::string_view text) {
  VenvConfig config;
  std::istringstream lines{std::string(text)};
  std::string line;
  auto trim = [](std::string value) {
    auto begin = value.find_first_not_of(" \t\r");
    auto end = value.find_last_not_of(" \t\r");
    return begin == std::string::npos ? std::string() : value.substr(begin, end - begin + 1);
  };
  while (std::getline(lines, line)) {
    auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    std::string key = trim(line.substr(0, equals));
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = trim(line.substr(equals + 1));
    if (key == "include-system-site-packages") {
      for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      config.system_site_packages = value == "true";
    } else if (key == "home") {
      config.home = value;
    } else if (key == "version" || key == "version_info") {
      // "3.11.2" (CPython's venv), "3.12.7" (uv's version_info): the X.Y site.py uses.
      auto first = value.find('.');
      auto second = first == std::string::npos ? first : value.find('.', first + 1);
      config.version = value.substr(0, second);
    }
  }
  return config;
}

std::vector<std::string> interpreter_site_packages(const NodeFs& node, const std::string& prefix) {
  auto cfg = node.read(prefix + "/" + std::string(kVenvMarker), 64 * 1024);
  if (!cfg) return prefix_site_packages(node, prefix);
  const VenvConfig config = parse_pyvenv_cfg(*cfg);
  std::string version = config.version;
  if (version.empty())  // no version key: the venv's own lib/pythonX.Y
    for (const auto& name : node.list(prefix + "/lib"))
      if (name.starts_with("python3.")) {
        version = name.substr(6);
        break;
      }
  if (version.empty()) return prefix_site_packages(node, prefix);
  // The base interpreter's prefix as getpath finds it from `home`: the first directory up from
  // it that holds the standard library's landmark, lib/pythonX.Y/os.py.
  std::optional<std::string> base;
  if (!config.home.empty())
    for (std::string dir = normal_path(config.home); !dir.empty(); dir = parent_path(dir)) {
      if (node.read(dir + "/lib/python" + version + "/os.py", 4 << 20)) {
        base = dir;
        break;
      }
      if (dir == "/") break;
    }
  // Debian's python3 patches getsitepackages() (its site.py names dist-packages); CPython's
  // own site.py gives one site-packages per prefix.
  bool debian = false;
  if (base)
    if (auto site_py = node.read(*base + "/lib/python" + version + "/site.py", 4 << 20))
      debian = site_py->find("dist-packages") != std::string::npos;
  // site.venv(): the venv's prefix, then the base's where include-system-site-packages is true.
  std::vector<std::string> prefixes{prefix};
  if (base && config.system_site_packages) prefixes.push_back(*base);
  std::vector<std::string> found;
  for (const auto& each : prefixes) {
    std::vector<std::string> candidates{each + "/lib/python" + version + "/site-packages"};
    if (debian) {
      candidates.push_back(each + "/local/lib/python" + version + "/dist-packages");
      candidates.push_back(each + "/lib/python3/dist-packages");
      candidates.push_back(each + "/lib/python" + version + "/dist-packages");
    }
    for (const auto& candidate : candidates)
      if (node.is_directory(candidate) &&
          std::find(found.begin(), found.end(), candidate) == found.end())
        found.push_back(candidate);
  }
  return found;
}

PythonEnvFact probe_python_env(const NodeFs& node, const std::string& prefix,
                               const std::string& interpreter) {
  PythonEnvFact env;
  env.prefix = prefix;
  env.interpreter = interpreter;
  env.interpreter_exists = node.is_executable_file(interpreter);
  env.site_packages = interpreter_site_packages(node, prefix);
  for (const auto& site : env.site_packages) {
    for (const auto& entry : node.list(site)) {
      constexpr std::string_view suffix = ".dist-info";
      if (entry.size() <= suffix.size() || !entry.ends_with(suffix)) continue;
      auto dash = entry.find('-');
      auto dist = normalise_dist_name(entry.substr(0, dash));
      for (const auto& watched : watched_packages()) {
        if (watched.dist != dist || env.packages.contains(std::string(watched.key))) continue;
        auto metadata = node.read(site + "/" + entry + "/METADATA", kMetadataLimit);
        auto version = metadata ? parse_metadata_version(*metadata) : std::nullopt;
        if (!version && dash != std::string::npos)
          version = entry.substr(dash + 1, entry.size() - suffix.size() - dash - 1);
        if (version) env.packages[std::string(watched.key)] = *version;
      }
    }
    for (auto module : watched_modules())
      if (node.is_directory(site + "/" + std::string(module)))
        env.modules[std::string(module)] = true;
    if (!env.torch_version) {
      if (auto text = node.read(site + "/torch/version.py", 64 * 1024)) {
        auto torch = parse_torch_version_py(*text);
        env.torch_version = torch.version;
        env.torch_cuda = torch.cuda;
      }
    }
  }
  for (auto module : watched_modules()) env.modules.try_emplace(std::string(module), false);
  return env;
}

std::optional<std::string> installed_engine_version(const PythonEnvFact& python, EngineKind kind) {
  auto found = python.packages.find(std::string(engine_row(kind).import_module));
  if (found == python.packages.end()) return std::nullopt;
  return found->second;
}

std::optional<std::string> installed_engine_version(const Facts& facts, EngineKind kind) {
  if (!facts.python) return std::nullopt;
  return installed_engine_version(*facts.python, kind);
}

std::optional<std::string> installed_engine_version(const NodeFs& node, EngineKind kind,
                                                    const std::string& venv) {
  return installed_engine_version(probe_python_env(node, venv, venv + "/bin/python"), kind);
}

}  // namespace gl
