// SPDX-License-Identifier: Apache-2.0
#include "facts/discovery.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "catalog/discovery_places.hpp"
#include "catalog/hub_cache.hpp"
#include "catalog/node_requirements.hpp"
#include "facts/model_probe.hpp"
#include "facts/python_env.hpp"
#include "util/safe_file.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

// Why root must not take `node_path` (an entry of a listed directory, or a path it was told);
// nullopt when it may. The entry is judged as it stands: a link is not followed.
std::optional<std::string> untrusted_reason(const NodeFs& node, const std::string& node_path,
                                            bool trusted_only) {
  if (!trusted_only) return std::nullopt;
  auto parent = node.host_path(parent_path(node_path));
  if (!parent)
    return fmt::format("'{}' does not resolve within {} links", node_path, NodeFs::kMaxLinks);
  const fs::path host = *parent / fs::path(node_path).filename();
  std::error_code error;
  if (fs::is_symlink(fs::symlink_status(host, error)))
    return fmt::format("'{}' is a link, which discovery as root does not follow", node_path);
  if (auto reason = user_writable_reason(host))
    return fmt::format("'{}' can be changed by a user other than root: {}", node_path, *reason);
  return std::nullopt;
}

class Finder {
 public:
  Finder(const NodeFs& node, const DiscoveryRequest& request) : node_(node), request_(request) {}

  void venv(const std::string& prefix, const std::string& via) {
    const std::string path = normal_path(prefix);
    if (!seen_.insert(path).second) return;
    if (skipped(path)) return;
    VenvCandidate candidate{path, via, probe_python_env(node_, path, path + "/bin/python"), {}};
    // Its site-packages too: a venv whose libraries another user can write is theirs.
    for (const auto& site : candidate.python.site_packages)
      if (skipped(site, path)) return;
    for (const auto& row : engine_rows())
      if (auto version = installed_engine_version(candidate.python, row.kind))
        candidate.engines.emplace_back(row.kind, *version);
    found_.venvs.push_back(std::move(candidate));
  }

  void model(const std::string& where, const std::string& via) {
    const std::string path = normal_path(where);
    if (!seen_.insert(path).second) return;
    if (skipped(path)) return;
    found_.models.push_back({path, via, false, probe_model(node_, path)});
  }

  void hub_model(const std::string& cache, const std::string& folder, const std::string& id) {
    const std::string path = normal_path(cache) + "/" + folder;
    if (!seen_.insert(id).second) return;
    if (skipped(path)) return;
    found_.models.push_back({id, "hub cache " + cache, true, probe_hub_model(node_, cache, id)});
  }

  Discovery done() { return std::move(found_); }

 private:
  bool skipped(const std::string& path, const std::string& shown = {}) {
    auto reason = untrusted_reason(node_, path, request_.trusted_only);
    if (!reason) return false;
    found_.skipped.push_back({shown.empty() ? path : shown, *reason});
    return true;
  }

  const NodeFs& node_;
  const DiscoveryRequest& request_;
  Discovery found_;
  std::set<std::string> seen_;
};

bool is_model_directory(const NodeFs& node, const std::string& path) {
  return node.is_directory(path) && node.exists(path + "/" + std::string(kModelConfig));
}

// A place's directories: itself, or with its one "*" component standing for each directory there.
std::vector<std::string> place_directories(const NodeFs& node, std::string_view place) {
  const auto star = place.find("/*");
  if (star == std::string_view::npos) return {std::string(place)};
  const std::string parent(place.substr(0, star));
  const std::string rest(place.substr(star + 2));
  std::vector<std::string> found;
  for (const auto& name : node.list(parent))
    if (node.is_directory(parent + "/" + name)) found.push_back(parent + "/" + name + rest);
  return found;
}

}  // namespace

Discovery discover(const NodeFs& node, const DiscoveryRequest& request) {
  Finder finder(node, request);
  if (request.venv) {
    finder.venv(*request.venv, "--venv");
  } else {
    for (const auto& place : venv_places())
      for (const auto& directory : place_directories(node, place.directory))
        for (const auto& name : node.list(directory)) {
          const std::string path = directory + "/" + name;
          if (node.exists(path + "/" + std::string(kVenvMarker)))
            finder.venv(path, std::string(place.directory));
        }
  }
  if (request.model) {
    if (request.model->starts_with('/')) {
      if (node.exists(*request.model)) finder.model(*request.model, "--model");
    }
    // A hub id is the profile's as told; it is measured where a hub cache holds it.
    else
      for (const auto& cache : request.hub_caches)
        if (node.is_directory(cache + "/" + hub_repo_folder(*request.model)))
          finder.hub_model(cache, hub_repo_folder(*request.model), *request.model);
  } else {
    for (const auto& place : model_places())
      for (const auto& directory : place_directories(node, place.directory))
        for (const auto& name : node.list(directory)) {
          const std::string path = directory + "/" + name;
          if (is_model_directory(node, path) ||
              (name.ends_with(kGgufSuffix) && !node.is_directory(path)))
            finder.model(path, std::string(place.directory));
        }
    for (const auto& cache : request.hub_caches)
      for (const auto& folder : node.list(cache))
        if (auto id = hub_repo_id(folder);
            id && node.is_directory(cache + "/" + folder + "/" + std::string(kHubSnapshotsFolder)))
          finder.hub_model(cache, folder, *id);
  }
  return finder.done();
}

}  // namespace gl
