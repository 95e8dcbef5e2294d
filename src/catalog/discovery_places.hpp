// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where `gpulaunch init` looks for what it was not told: engine venvs and models. These are the
// layouts the project's own profiles, README and Ansible role use, and the conventions of the
// tools that make them (PEP 405 venvs, transformers' config.json, llama.cpp's GGUF files); the
// hub cache's own place is catalog/hub_cache. One table, so the man page and the search agree.

#include <span>
#include <string_view>

namespace gl {

struct DiscoveryPlace {
  // Each entry inside it is a candidate. A "*" component stands for every directory there
  // ("/opt/*/venvs": /opt/a/venvs, /opt/b/venvs), read one level.
  std::string_view directory;
  std::string_view why;  // whose convention it is
};

// Directories whose entries may be venvs: a directory holding pyvenv.cfg (PEP 405,
// "A pyvenv.cfg file ... in the venv's root directory"; Python 3.11 Lib/venv/__init__.py).
std::span<const DiscoveryPlace> venv_places();
inline constexpr std::string_view kVenvMarker = "pyvenv.cfg";

// Directories whose entries may be models: a directory holding config.json (transformers
// src/transformers/utils/__init__.py CONFIG_NAME, v4.57.0), or a *.gguf file (llama.cpp).
std::span<const DiscoveryPlace> model_places();
inline constexpr std::string_view kGgufSuffix = ".gguf";

// The hub cache root's own home holds when its environment says nothing else.
inline constexpr std::string_view kRootHome = "/root";

}  // namespace gl
