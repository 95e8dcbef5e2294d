// SPDX-License-Identifier: Apache-2.0
#pragma once
// The profiles `up` installed on a node: their snapshots (util/state_paths) under the node's
// root, each with the GPUs its unit gets (plan/gpu_assignment). `check` flags another profile on
// the same GPUs; `check --all` checks each of them.

#include <filesystem>
#include <vector>

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

// One per NAME.toml in the snapshot directory, sorted by name; a snapshot that does not load
// keeps its name and the reason.
std::vector<InstalledProfileFact> probe_installed_profiles(const NodeFs& node);

// Where the snapshot of `fact` lies on this machine (under the node's root).
std::filesystem::path installed_snapshot_path(const NodeFs& node, const InstalledProfileFact& fact);

}  // namespace gl
