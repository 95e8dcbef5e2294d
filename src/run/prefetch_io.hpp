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

#include "catalog/hub_cache.hpp"  // hub_cache_directory, hub_repo_folder
#include "run/prefetch.hpp"
#include "util/error.hpp"

namespace gl {

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
