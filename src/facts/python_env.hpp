// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's Python environment read as files, never imported: torch/version.py and the
// dist-info METADATA of the packages the rules care about (field-facts section 4).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/engines.hpp"
#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

struct TorchVersion {
  std::optional<std::string> version;  // "2.9.0+cu130"
  std::optional<std::string> cuda;     // "13.0"; nullopt for `cuda = None`
};

TorchVersion parse_torch_version_py(std::string_view text);
// The most of a dist-info METADATA file read: it carries the package's whole description after
// its headers, and only the headers are needed.
inline constexpr size_t kMetadataLimit = 1 << 20;
// The "Version:" header of a METADATA file.
std::optional<std::string> parse_metadata_version(std::string_view text);
// PEP 503 normalisation with "_": "FlashInfer-Python" -> "flashinfer_python".
std::string normalise_dist_name(std::string_view name);

// A venv's pyvenv.cfg as CPython's site.venv() reads it ("key = value", keys case-blind).
struct VenvConfig {
  bool system_site_packages = false;  // include-system-site-packages = true
  std::string home;                   // the base interpreter's directory
  std::string version;                // "3.11", from version / version_info
};
VenvConfig parse_pyvenv_cfg(std::string_view text);

// Where `prefix`'s interpreter imports from, in sys.path's order (CPython's Lib/site.py:
// venv() and getsitepackages(), 3.11; Debian 12's python3.11 3.11.2-6+deb12u6 site.py adds
// local/lib/pythonX.Y/dist-packages, lib/python3/dist-packages and lib/pythonX.Y/dist-packages per
// prefix): a venv's own site-packages, then, with include-system-site-packages = true, its base
// interpreter's (the prefix getpath finds from pyvenv.cfg's `home` by lib/pythonX.Y/os.py). An
// interpreter's own prefix: every lib/python3* and local/lib/python3* site- or dist-packages.
// Read as files through `node` (links inside its root, regular files only).
std::vector<std::string> interpreter_site_packages(const NodeFs& node, const std::string& prefix);

// `prefix` is a venv or an interpreter's prefix; `interpreter` its bin/python. Each package is
// read where the interpreter would import it first.
PythonEnvFact probe_python_env(const NodeFs& node, const std::string& prefix,
                               const std::string& interpreter);

// The engine's installed version (its row's package in `packages`), which picks its launcher
// (engines/engine_argv): from facts already gathered, or read from `venv` alone, as files.
std::optional<std::string> installed_engine_version(const PythonEnvFact& python, EngineKind kind);
std::optional<std::string> installed_engine_version(const Facts& facts, EngineKind kind);
std::optional<std::string> installed_engine_version(const NodeFs& node, EngineKind kind,
                                                    const std::string& venv);

}  // namespace gl
