// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's Python environment read as files, never imported: torch/version.py and the
// dist-info METADATA of the packages the rules care about (field-facts section 4).

#include <optional>
#include <string>
#include <string_view>

#include "catalog/engines.hpp"
#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

struct TorchVersion {
  std::optional<std::string> version;  // "2.9.0+cu130"
  std::optional<std::string> cuda;     // "13.0"; nullopt for `cuda = None`
};

TorchVersion parse_torch_version_py(std::string_view text);
// The "Version:" header of a METADATA file.
std::optional<std::string> parse_metadata_version(std::string_view text);
// PEP 503 normalisation with "_": "FlashInfer-Python" -> "flashinfer_python".
std::string normalise_dist_name(std::string_view name);

// `prefix` is a venv or an interpreter's prefix; `interpreter` its bin/python.
PythonEnvFact probe_python_env(const NodeFs& node, const std::string& prefix,
                               const std::string& interpreter);

// The engine's installed version (its row's package in `packages`), which picks its launcher
// (engines/engine_argv): from facts already gathered, or read from `venv` alone, as files.
std::optional<std::string> installed_engine_version(const PythonEnvFact& python, EngineKind kind);
std::optional<std::string> installed_engine_version(const Facts& facts, EngineKind kind);
std::optional<std::string> installed_engine_version(const NodeFs& node, EngineKind kind,
                                                    const std::string& venv);

}  // namespace gl
