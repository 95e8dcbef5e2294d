// SPDX-License-Identifier: Apache-2.0
#pragma once
// Moving a profile's state from the layout before root-owned history (supervise/history) once,
// at `up`.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gl {

// The layout before root-owned history: /var/lib/gpulaunch/NAME was the engine's StateDirectory,
// owned by service.user, with the history inside. When `state_root`/`profile` is owned by a
// non-root user, it is renamed (never copied) to become the engine's home below a new root-owned
// profile directory, and its supervisor.json and events.jsonl are read (bounded, no link
// followed), parsed strictly and written anew from the parsed fields. A file that fails that is
// refused with the fix, before anything moved. Returns what was done, or nullopt when there was
// nothing to migrate.
Result<std::optional<std::string>> migrate_legacy_state(const std::filesystem::path& state_root,
                                                        std::string_view profile);
// The same under state_paths::kStateRoot.
Result<std::optional<std::string>> migrate_legacy_state(std::string_view profile);

}  // namespace gl
