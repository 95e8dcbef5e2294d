// SPDX-License-Identifier: Apache-2.0
#include "facts/image_facts.hpp"

#include <cctype>

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "catalog/containers.hpp"
#include "facts/python_env.hpp"
#include "util/json_file.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

using Json = nlohmann::json;

std::string string_at(const Json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

// A CDI spec (YAML or JSON) is small; nvidia-ctk writes one device per GPU and MIG device.
constexpr size_t kCdiSpecLimit = 4 << 20;

std::string unquoted(std::string text) {
  auto begin = text.find_first_not_of(" \t\"'");
  auto end = text.find_last_not_of(" \t\"',\r");
  if (begin == std::string::npos || end < begin) return "";
  return text.substr(begin, end - begin + 1);
}

// What a spec offers: its kind and its devices' names. nvidia-ctk's YAML puts `kind:` and each
// device's `- name:` at the top level; its JSON is one `"kind": ...` and `"name": ...` per line
// only when pretty-printed, so JSON is parsed as JSON.
void read_cdi_spec(const std::string& text, const std::string& path, CdiFact& cdi) {
  std::string kind, version;
  std::vector<std::string> names;
  if (auto json = parse_bounded_json<Json>(text, path); json && json->is_object()) {
    kind = string_at(*json, "kind");
    version = string_at(*json, "cdiVersion");
    if (auto devices = json->find("devices"); devices != json->end() && devices->is_array())
      for (const auto& device : *devices)
        if (device.is_object()) names.push_back(string_at(device, "name"));
  } else {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("kind:", 0) == 0) kind = unquoted(line.substr(5));
      if (line.rfind("cdiVersion:", 0) == 0) version = unquoted(line.substr(11));
      if (line.rfind("- name:", 0) == 0) names.push_back(unquoted(line.substr(7)));
    }
  }
  if (kind != kCdiGpuKind) return;
  cdi.specs.push_back(path);
  if (!version.empty()) cdi.spec_versions[path] = version;
  // The driver it was generated for: each libcuda.so.X.Y.Z it mounts, in YAML or JSON alike.
  for (size_t at = text.find(kCdiDriverLibrary); at != std::string::npos;
       at = text.find(kCdiDriverLibrary, at + 1)) {
    const size_t begin = at + kCdiDriverLibrary.size();
    size_t end = begin;
    while (end < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
      ++end;
    std::string version = text.substr(begin, end - begin);
    while (!version.empty() && version.back() == '.') version.pop_back();
    // libcuda.so.1 is the soname, not a driver version.
    if (version.find('.') == std::string::npos) continue;
    if (std::find(cdi.driver_versions.begin(), cdi.driver_versions.end(), version) ==
        cdi.driver_versions.end())
      cdi.driver_versions.push_back(std::move(version));
  }
  for (auto& name : names)
    if (!name.empty() &&
        std::find(cdi.gpu_devices.begin(), cdi.gpu_devices.end(), name) == cdi.gpu_devices.end())
      cdi.gpu_devices.push_back(std::move(name));
}

}  // namespace

Result<void> parse_image_inspect(std::string_view text, ImageFact& image) {
  GL_TRY(auto json, parse_bounded_json<Json>(text, "podman image inspect"));
  if (!json.is_array() || json.size() != 1 || !json.front().is_object())
    return failf("Failed to read image '{}': podman image inspect printed no image object",
                 image.reference);
  const Json& object = json.front();
  image.id = string_at(object, "Id");
  image.digest = string_at(object, "Digest");
  auto config = object.find("Config");
  if (config == object.end() || !config->is_object()) return {};
  if (auto env = config->find("Env"); env != config->end() && env->is_array())
    for (const auto& entry : *env) {
      if (!entry.is_string()) continue;
      auto text = entry.get<std::string>();
      auto equals = text.find('=');
      if (equals == std::string::npos || equals == 0) continue;
      image.env[text.substr(0, equals)] = text.substr(equals + 1);
    }
  if (auto labels = config->find("Labels"); labels != config->end() && labels->is_object())
    for (const auto& [key, value] : labels->items())
      if (value.is_string()) image.labels[key] = value.get<std::string>();
  if (auto found = image.env.find(std::string(kRequireCudaVariable)); found != image.env.end())
    image.require_cuda = found->second;
  if (auto found = image.env.find(std::string(kCudaVersionVariable)); found != image.env.end())
    image.cuda_version = found->second;
  return {};
}

PythonEnvFact read_image_root(const NodeFs& image_root, ImageFact& image) {
  const std::string parent(kCudaInstallParent);
  std::vector<std::string> compat_dirs;
  for (const auto& name : image_root.list(parent))
    if (name == "cuda" || name.rfind("cuda-", 0) == 0) compat_dirs.push_back(parent + "/" + name);
  for (const auto& directory : compat_dirs) {
    std::string compat = directory + "/compat";
    for (const auto& name : image_root.list(compat)) {
      if (name.rfind(kCompatLibraryPrefix, 0) != 0) continue;
      std::string version = name.substr(kCompatLibraryPrefix.size());
      // libcuda.so.1 is the soname link; the file carries the driver's version.
      if (std::count(version.begin(), version.end(), '.') < 1) continue;
      const auto resolved = image_root.resolve(compat + "/" + name);
      if (!resolved) continue;
      const std::string& path = *resolved;
      if (!image_root.exists(path) || image_root.is_directory(path)) continue;
      if (std::find(image.compat_libraries.begin(), image.compat_libraries.end(), path) ==
          image.compat_libraries.end())
        image.compat_libraries.push_back(path);
      if (!image.compat_driver) image.compat_driver = version;
    }
  }
  return probe_python_env(image_root, std::string(kImagePythonPrefix),
                          std::string(kImagePythonInterpreter));
}

ImageProbe probe_image(ImageTool& tool, const std::string& reference) {
  ImageProbe probe;
  probe.image.reference = reference;
  auto inspected = tool.inspect(reference);
  if (!inspected) {
    probe.image.problems.push_back(inspected.error().message);
    return probe;
  }
  if (auto parsed = parse_image_inspect(*inspected, probe.image); !parsed)
    probe.image.problems.push_back(parsed.error().message);
  auto mounted = tool.mount(reference);
  if (!mounted) {
    probe.image.problems.push_back(mounted.error().message);
    return probe;
  }
  probe.python = read_image_root(NodeFs(*mounted), probe.image);
  if (auto unmounted = tool.unmount(reference); !unmounted)
    probe.image.problems.push_back(unmounted.error().message);
  return probe;
}

CdiFact probe_cdi(const NodeFs& node) {
  CdiFact cdi;
  for (auto directory : cdi_spec_directories())
    for (const auto& name : node.list(std::string(directory))) {
      if (!name.ends_with(".yaml") && !name.ends_with(".json")) continue;
      std::string path = std::string(directory) + "/" + name;
      if (auto text = node.read(path, kCdiSpecLimit)) read_cdi_spec(*text, path, cdi);
    }
  return cdi;
}

}  // namespace gl
