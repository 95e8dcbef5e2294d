// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `gpulaunch init` finds on a node that it was not told: engine venvs (each read as files by
// facts/python_env: its engine and version, torch and its CUDA) and models (local directories
// with config.json, GGUF files, the hub cache's models, each measured by facts/model_probe), in
// catalog/discovery_places' places. Nothing found is run or imported.
//
// As root (`trusted_only`), a candidate the engine or another user could change is skipped with
// the reason (SECURITY.md: root never executes from, follows links out of, or merges files from
// such places): an entry that is a link, or one util/safe_file's user_writable_reason names.

#include <optional>
#include <string>
#include <vector>

#include "catalog/engines.hpp"
#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

struct VenvCandidate {
  std::string prefix;
  std::string found_via;  // "--venv", "/opt/gpulaunch/venvs"
  PythonEnvFact python;
  // The engines whose package it holds, with their versions (catalog/engines' rows).
  std::vector<std::pair<EngineKind, std::string>> engines;
};

struct ModelCandidate {
  std::string path;  // an absolute directory or GGUF file, or a hub id
  std::string found_via;
  bool hub = false;  // a hub id found in a hub cache
  ModelFact fact;
};

struct SkippedCandidate {
  std::string path;
  std::string reason;
};

struct Discovery {
  std::vector<VenvCandidate> venvs;
  std::vector<ModelCandidate> models;
  std::vector<SkippedCandidate> skipped;
};

struct DiscoveryRequest {
  bool trusted_only = false;  // root: skip what others could change
  // Told by the caller: looked at alone, not searched for (still judged when trusted_only).
  std::optional<std::string> venv{};
  std::optional<std::string> model{};
  std::vector<std::string> hub_caches{};  // huggingface_hub caches to list (catalog/hub_cache)
};

Discovery discover(const NodeFs& node, const DiscoveryRequest& request);

}  // namespace gl
