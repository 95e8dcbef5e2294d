// SPDX-License-Identifier: Apache-2.0
#pragma once
// The real PrefetchIo (run/prefetch.hpp): a model's weight files found and opened the way root
// opens what others can write (util/safe_file's rules: no link followed on the way, O_NOFOLLOW,
// regular files only, nothing written), page-cache residency from mmap + mincore, reads with
// pread, MemAvailable from /proc/meminfo. It holds one descriptor (the model's directory)
// whatever the file count, and reads no file on another filesystem than that directory.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run/prefetch.hpp"
#include "util/error.hpp"

namespace gl {

// Where huggingface_hub keeps its cache in `environment` (huggingface_hub
// src/huggingface_hub/constants.py at commit 03333b6): HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE,
// else HF_HOME/hub, HF_HOME defaulting to $XDG_CACHE_HOME/huggingface, then
// $HOME/.cache/huggingface. nullopt when neither says where.
std::optional<std::string> hub_cache_directory(
    const std::vector<std::pair<std::string, std::string>>& environment);

// A hub id's folder in that cache: models--ORG--NAME (huggingface_hub
// src/huggingface_hub/file_download.py, repo_folder_name; _create_symlink makes relative links),
// holding refs/REVISION (a commit hash), snapshots/COMMIT/FILE (links to
// ../../blobs/HASH) and blobs/.
std::string hub_repo_folder(const std::string& repo_id);

// The weight files (*.safetensors, *.bin, *.gguf, as facts/model_probe counts them) of
// `model_path`: a local directory or file, or a hub id's snapshot of `revision` (default
// "main") in the hub cache of `environment`. Links inside the model are followed only where
// they stay in it (a local directory, or the hub id's folder: snapshots link into blobs/), and
// then only as written, never a second link. The error is one line saying what to run when
// the model is not local.
Result<std::unique_ptr<PrefetchIo>> open_model_weights(
    const std::string& model_path, const std::optional<std::string>& revision,
    const std::vector<std::pair<std::string, std::string>>& environment);

}  // namespace gl
