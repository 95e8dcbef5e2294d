// SPDX-License-Identifier: Apache-2.0
#pragma once
// A local model directory's weight size and attention shape, for `check`'s fit rule. Everything
// in it is someone else's file: opened without following a link (util/safe_file), bounded, and
// a weight file that is a link is counted as skipped, not measured.

#include <string>
#include <string_view>

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

// The weights: model.safetensors.index.json's metadata.total_size, else the sizes of the
// directory's *.safetensors, *.bin and *.gguf files; the shape from config.json (its text_config
// for a multimodal model). A path that is one file (a GGUF) is its own size.
// Whether a file in a model directory holds weights, by its name (*.safetensors, *.bin,
// *.gguf): what the fit rule sums and `gpulaunch warm` reads.
bool is_weight_file(std::string_view name);

ModelFact probe_model(const NodeFs& node, const std::string& model_path);

// A hub id in a huggingface_hub cache (catalog/hub_cache): the snapshot refs/main names (else
// the newest-named one); its entries are links to ../../blobs/HASH, each taken only when it says
// exactly that (a link anywhere else is skipped), the blob opened without following a link.
ModelFact probe_hub_model(const NodeFs& node, const std::string& hub_cache,
                          const std::string& repo_id);

}  // namespace gl
