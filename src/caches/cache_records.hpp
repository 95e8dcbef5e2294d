// SPDX-License-Identifier: Apache-2.0
#pragma once
// What root keeps about a profile's caches, in a directory only root can write
// (state_paths::cache_stamp_directory): the fingerprint stamp the caches were last made valid
// for, and the directories outside the cache root that gpulaunch created, so a clear empties
// those and no directory it did not make. Nothing of this lives in the cache root: the engine
// owns that, and whatever is read there is the engine's.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caches/fingerprint.hpp"
#include "caches/safe_remove.hpp"
#include "util/error.hpp"
#include "util/safe_file.hpp"

namespace gl {

// The records directory of `profile` with root's state kept at `state_root` rather than
// state_paths::kStateRoot (tests): state_paths::cache_stamp_directory moved there.
std::filesystem::path cache_records_directory(std::string_view profile,
                                              const std::filesystem::path& state_root);

// Where older versions kept the stamp, in the cache root: never read, removed (confined).
inline constexpr std::string_view kOldStampName = ".gpulaunch-fingerprint";

struct Stamp {
  std::string root;  // the cache root it was written for
  std::string hash;  // fingerprint_hex of the fields
  std::vector<FingerprintField> fields;
};

Stamp make_stamp(const std::string& cache_root, const FingerprintInputs& inputs);
std::string stamp_text(const Stamp& stamp);
// Strict: the header line, "root=" an absolute path, "hash=" 16 hex digits that are the hash of
// the "name=value" lines that follow (names [a-z_], each once), every line ended. nullopt for
// anything else, which counts as no stamp: the caches are stale, the safe answer.
std::optional<Stamp> parse_stamp(std::string_view text);

// A directory gpulaunch created for a cache outside the cache root.
struct CreatedDirectory {
  std::string path;  // absolute, lexically normal
  FileIdentity identity;
  // Its birth time (0: unknown: the filesystem keeps none, or a record written before it was
  // kept): a directory someone made after gpulaunch's was removed may get the same inode number
  // (ext4 hands freed ones out again), never the same birth time.
  BirthTime birth = 0;
};

std::string created_text(const std::vector<CreatedDirectory>& directories);
// Strict as parse_stamp; nullopt for anything else (then no directory counts as created).
std::optional<std::vector<CreatedDirectory>> parse_created(std::string_view text);

// The uid and gid the caches were last handed to ("uid=N\ngid=N\n" after a header): how a
// start tells that the profile's user changed since (prepare_caches moves the caches then).
std::string owner_text(const DirectoryOwner& owner);
// Strict as parse_stamp; nullopt for anything else (then the owner found on disk counts).
std::optional<DirectoryOwner> parse_owner(std::string_view text);

class CacheRecords {
 public:
  // For root, which writes them: missing directories are created, and any part of the path a
  // non-root user could write is refused (open_root_owned_directory). For anyone else, their own
  // (`run --foreground` keeps them in its state directory): open_user_owned_directory.
  static Result<CacheRecords> open(const std::filesystem::path& directory);
  // For looking only: creates nothing; nullopt when the directory does not exist.
  static Result<std::optional<CacheRecords>> open_existing(const std::filesystem::path& directory);

  // `open` for root; for anyone else `open_existing`: a non-root caller can remove only what it
  // could remove by hand, and cannot create root's directory.
  static Result<std::optional<CacheRecords>> open_as_caller(const std::filesystem::path& directory);

  const std::filesystem::path& path() const { return path_; }

  // Read with read_regular_at: no link, regular files only, bounded. A stamp or record that is
  // not one (parse_stamp, parse_created) reads as absent.
  Result<std::optional<Stamp>> stamp() const;
  Result<void> write_stamp(const Stamp& stamp) const;
  Result<void> remove_stamp() const;

  Result<std::vector<CreatedDirectory>> created() const;
  // Records `directory`, replacing what was recorded at its path.
  Result<void> record_created(const CreatedDirectory& directory) const;
  // Records `directory` beside what is recorded at its path: a directory about to be swapped in
  // for the recorded one (cache import), so whichever a crash leaves there counts as
  // gpulaunch's until record_created settles it.
  Result<void> add_created(const CreatedDirectory& directory) const;
  Result<std::optional<DirectoryOwner>> owner() const;
  Result<void> write_owner(const DirectoryOwner& owner) const;

  // Whether the directory at `path` with `identity` is one gpulaunch created: same path, same
  // device and inode (a directory swapped in at the path is not).
  // Where both the record and the directory have a birth time, it must be the same too.
  Result<bool> was_created(const std::string& path, const FileIdentity& identity,
                           BirthTime birth) const;

 private:
  CacheRecords(std::filesystem::path path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}
  std::string shown(std::string_view name) const;
  std::filesystem::path path_;
  UniqueFd fd_;
};

}  // namespace gl
