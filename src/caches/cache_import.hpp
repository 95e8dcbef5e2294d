// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch cache import`: another node's compiled caches (caches/cache_export) put in place of
// this profile's, as root, so its first start here does not compile them again. The archive is
// untrusted input: nothing in it is executed, and only what the checks below admit is written.

#include <cstdint>
#include <string>
#include <vector>

#include "caches/cache_digest.hpp"
#include "caches/fingerprint.hpp"
#include "caches/prepare.hpp"
#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace gl {

// What an archive's file lists may make import create, all caches together: checked on the lists
// before anything is created. (Each path is at most 128 components and 4096 bytes deep, the lists
// at most kMaxRecordsBytes, so depth x count is bounded too.)
inline constexpr std::uint64_t kMaxImportedDirectories = 100'000;
inline constexpr std::uint64_t kMaxImportedDirectoryBytes = 16 << 20;

// The room import leaves on the cache's filesystem: `percent` of its size and of its inodes, at
// most max_bytes and max_inodes. Import stops before a file, a directory or a write would take
// the filesystem below it.
struct SpaceReserve {
  std::uint64_t max_bytes = 1ULL << 30;
  std::uint64_t max_inodes = 100'000;
  std::uint64_t percent = 5;
};

struct ImportOptions {
  PrepareOptions prepare;  // root's records and the service user the caches belong to
  DigestLimits limits;     // per cache: files, and bytes written
  SpaceReserve reserve = {};
};

struct ImportedCache {
  std::string name;
  std::string path;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  std::uint64_t replaced_entries = 0;  // what the directory it replaced held, now removed
};

struct ImportReport {
  std::string profile;     // the manifest's: where the archive was exported from
  PrepareReport prepared;  // what bringing the caches up to date did first
  std::vector<ImportedCache> caches;
};

// Reads the archive on `fd` (`shown` names it). Before anything is written: the manifest must
// parse, every cache it lists must be one of `plan`'s, and each cache's facts must be this
// node's (`inputs`), else the refusal names the facts that differ; each cache's file list must
// hash to its manifest's digest, agree with its counts and stay within `limits`, and the
// directories the lists imply within kMaxImportedDirectories (no path both a file and a
// directory). Then the caches are prepared as a start prepares them (prepare_caches: created
// for the service user, stale ones cleared, the stamp written, so the next start keeps what is
// imported), and each archived cache is extracted into a fresh private directory beside it:
// regular files and directories only (a link, device or FIFO member refuses the archive), each
// file the next its list names, of the size it records, its content checked against its
// record's digest as it streams (all-zero blocks left as holes, nothing past the size taken),
// within `options.reserve` of the filesystem, every directory created and every file created new
// without following a link, owned by the service user. Only
// when every cache's extracted content digests to its manifest's digest is each swapped in with
// one rename (a directory gpulaunch created outside the cache root is recorded anew); before
// that, a refusal or a crash leaves every cache as it was, and the leftovers (`.trash-import-*`)
// are swept by the next import or start.
Result<ImportReport> import_caches(const LaunchPlan& plan, const FingerprintInputs& inputs,
                                   const ImportOptions& options, int fd, const std::string& shown,
                                   const RemovalSink& on_removal = {});

}  // namespace gl
