// SPDX-License-Identifier: Apache-2.0
#pragma once
// huggingface_hub's cache layout (huggingface_hub src/huggingface_hub/constants.py and
// file_download.py at commit 03333b6): where the cache is, and how a hub id names its folder.
// `run`'s prefetch opens weights through it, `init` lists the models it holds.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gl {

// Where huggingface_hub keeps its cache in `environment` (constants.py): HF_HUB_CACHE, else
// HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, HF_HOME defaulting to $XDG_CACHE_HOME/huggingface,
// then $HOME/.cache/huggingface. nullopt when neither says where.
std::optional<std::string> hub_cache_directory(
    const std::vector<std::pair<std::string, std::string>>& environment);

// A hub id's folder in that cache: models--ORG--NAME (file_download.py, repo_folder_name;
// _create_symlink makes relative links), holding refs/REVISION (a commit hash),
// snapshots/COMMIT/FILE (links to ../../blobs/HASH) and blobs/.
std::string hub_repo_folder(const std::string& repo_id);

// The hub id a models--ORG--NAME folder holds ("ORG/NAME"); nullopt for any other name (a
// dataset's datasets--, a space's spaces--, .locks).
std::optional<std::string> hub_repo_id(std::string_view folder);

// The folders inside a repo folder (file_download.py).
inline constexpr std::string_view kHubRefsFolder = "refs";
inline constexpr std::string_view kHubSnapshotsFolder = "snapshots";
inline constexpr std::string_view kHubBlobsFolder = "blobs";
inline constexpr std::string_view kHubDefaultRevision = "main";

}  // namespace gl
