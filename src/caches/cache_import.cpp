// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_import.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include <fmt/core.h>

#include "caches/archive_manifest.hpp"
#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "caches/safe_remove.hpp"
#include "util/safe_file.hpp"
#include "util/sha256.hpp"
#include "util/tar_archive.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// One archived cache on its way in: where it goes, the private directory it is extracted into,
// its file list and how far the stream has come through it.
struct Staged {
  const ArchivedCache* archived = nullptr;
  CacheTarget target;
  std::optional<ConfinedRoot> own;
  const ConfinedRoot* root = nullptr;
  std::optional<ConfinedRoot::Sibling> sibling;
  std::vector<FileRecord> records;    // hashes to the manifest's digest
  std::set<std::string> directories;  // every directory a listed file is in
  std::size_t next = 0;               // the record the next file member must be
  std::uint64_t bytes_written = 0;    // stored: the blocks that are not all zero

  const ConfinedRoot& confined() const { return target.own_root ? *own : *root; }
};

Result<ArchiveManifest> read_manifest(TarReader& reader, const std::string& shown) {
  GL_TRY(const auto first, reader.next());
  if (!first || first->path != kManifestMember || first->kind != MemberKind::file)
    return failf("Failed to import '{}': it does not begin with {}; not a gpulaunch cache archive",
                 shown, kManifestMember);
  if (first->size > kMaxManifestBytes)
    return failf("Failed to import '{}': its manifest is over {} bytes", shown, kMaxManifestBytes);
  std::string text;
  std::vector<char> buffer(64 * 1024);
  for (;;) {
    GL_TRY(const auto got, reader.read_data(buffer));
    if (got == 0) break;
    text.append(buffer.data(), got);
    if (text.size() > kMaxManifestBytes)
      return failf("Failed to import '{}': its manifest is over {} bytes", shown,
                   kMaxManifestBytes);
  }
  return parse_manifest(text, shown);
}

Result<void> check_facts(const ArchivedCache& archived, const CacheTarget& target,
                         const FingerprintInputs& inputs, const std::string& shown) {
  const auto here = cache_fingerprint_fields(target.entry, inputs);
  const std::string fingerprint = fingerprint_hex(fingerprint_hash(here));
  if (fingerprint == archived.fingerprint) return {};
  auto differences = describe_fact_differences(here, archived.facts);
  if (differences.empty())
    differences =
        fmt::format("fingerprint {} here, {} in the archive", fingerprint, archived.fingerprint);
  return failf(
      "Refusing to import cache '{}' from '{}': it was compiled for other facts than this "
      "node's: {}",
      archived.name, shown, differences);
}

std::string parent_of_path(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string member_of(const Staged& staged, const std::string& inside) {
  return fmt::format("{}/{}/{}", kArchivedCachesDirectory, staged.archived->name, inside);
}

// Each cache's file list, the members right after the manifest: hashed to its digest (so every
// path, size and content below is what the exporting node digested), its counts the manifest's.
Result<void> read_records(std::vector<Staged>& staged, TarReader& reader, const std::string& shown,
                          const DigestLimits& limits) {
  std::uint64_t total = 0;
  for (auto& cache : staged) {
    const std::string name = fmt::format("{}/{}", kRecordsDirectory, cache.archived->name);
    GL_TRY(const auto member, reader.next());
    if (!member || member->path != name || member->kind != MemberKind::file)
      return failf("Refusing to import '{}': member '{}' is not the file list of cache '{}' ({})",
                   shown, member ? member->path : "(the end)", cache.archived->name, name);
    std::string text;
    std::vector<char> buffer(64 * 1024);
    for (;;) {
      GL_TRY(const auto got, reader.read_data(buffer));
      if (got == 0) break;
      total += got;
      if (total > kMaxRecordsBytes)
        return failf("Refusing to import '{}': member '{}': the file lists are over {} bytes",
                     shown, name, kMaxRecordsBytes);
      text.append(buffer.data(), got);
    }
    if (sha256_hex(text) != cache.archived->digest)
      return failf(
          "Refusing to import '{}': member '{}' does not match the content digest in its "
          "manifest; the archive was altered or damaged",
          shown, name);
    GL_TRY(cache.records, parse_records(text, fmt::format("member '{}' of '{}'", name, shown)));
    std::uint64_t bytes = 0;
    for (const auto& record : cache.records) {
      if (record.size > limits.max_bytes - bytes)  // the sum cannot wrap around
        return failf("Refusing to import '{}': member '{}' lists over {} bytes", shown, name,
                     limits.max_bytes);
      bytes += record.size;
    }
    if (cache.records.size() != cache.archived->files || bytes != cache.archived->bytes)
      return failf(
          "Refusing to import '{}': member '{}' lists {} files, {} bytes; the manifest says {} "
          "files, {} bytes",
          shown, name, cache.records.size(), bytes, cache.archived->files, cache.archived->bytes);
  }
  return {};
}

// The directories the file lists imply, bounded in count and in the bytes of their names before
// any is created; a path that is both a file and a directory refuses the archive.
Result<void> plan_directories(std::vector<Staged>& staged, const std::string& shown) {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  for (auto& cache : staged) {
    for (const auto& record : cache.records)
      for (std::string above = parent_of_path(record.path); !above.empty();
           above = parent_of_path(above)) {
        if (cache.directories.contains(above)) break;  // and its own ancestors with it
        ++count;
        bytes += above.size();
        if (count > kMaxImportedDirectories || bytes > kMaxImportedDirectoryBytes)
          return failf(
              "Refusing to import '{}': member '{}': the files listed imply over {} directories "
              "or {} bytes of directory names",
              shown, member_of(cache, record.path), kMaxImportedDirectories,
              kMaxImportedDirectoryBytes);
        cache.directories.insert(above);
      }
    for (const auto& record : cache.records)
      if (cache.directories.contains(record.path))
        return failf("Refusing to import '{}': member '{}' is both a file and a directory", shown,
                     member_of(cache, record.path));
  }
  return {};
}

// Refuses `bytes` more and `inodes` more where they would take the filesystem below `reserve`.
Result<void> check_room(const ConfinedRoot& into, std::uint64_t bytes, std::uint64_t inodes,
                        const SpaceReserve& reserve, const std::string& shown,
                        const std::string& member) {
  GL_TRY(const auto space, into.free_space());
  const std::uint64_t keep_bytes =
      std::min(reserve.max_bytes, space.bytes_total / 100 * reserve.percent);
  if (space.bytes_free < keep_bytes || space.bytes_free - keep_bytes < bytes)
    return failf(
        "Refusing to import '{}': member '{}' would leave less than {} bytes free on the "
        "filesystem of '{}' ({} free; import keeps {}% of it, at most {} bytes)",
        shown, member, keep_bytes, into.shown(""), space.bytes_free, reserve.percent,
        reserve.max_bytes);
  if (space.inodes_total == 0) return {};
  const std::uint64_t keep_inodes =
      std::min(reserve.max_inodes, space.inodes_total / 100 * reserve.percent);
  if (space.inodes_free < keep_inodes || space.inodes_free - keep_inodes < inodes)
    return failf(
        "Refusing to import '{}': member '{}' would leave fewer than {} inodes free on the "
        "filesystem of '{}' ({} free; import keeps {}% of them, at most {})",
        shown, member, keep_inodes, into.shown(""), space.inodes_free, reserve.percent,
        reserve.max_inodes);
  return {};
}

Result<void> write_at(int fd, std::span<const char> data, std::uint64_t offset,
                      const std::string& shown) {
  while (!data.empty()) {
    const ssize_t wrote = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return failf("Failed to write '{}': {}", shown, std::strerror(errno));
    data = data.subspan(static_cast<std::size_t>(wrote));
    offset += static_cast<std::uint64_t>(wrote);
  }
  return {};
}

// One file member, the record it must match: created new, its stored blocks written as they
// come and checked against the record's content digest, its holes and zero blocks left holes.
Result<void> extract_file(Staged& staged, TarReader& reader, const ArchiveMember& member,
                          const FileRecord& record, const ImportOptions& options,
                          const std::string& shown) {
  const ConfinedRoot& into = staged.sibling->root;
  const auto refuse = [&](std::string_view why) {
    return failf("Refusing to import '{}': member '{}' {}", shown, member.path, why);
  };
  if (member.size != record.size)
    return refuse(
        fmt::format("claims {} bytes; the cache's file list says {}", member.size, record.size));
  if (const auto parent = parent_of_path(record.path); !parent.empty())
    GL_TRY_VOID(into.make_directories(parent, options.prepare.owner));
  GL_TRY_VOID(check_room(into, 0, 1, options.reserve, shown, member.path));
  GL_TRY(auto file,
         into.create_file(record.path, member.executable ? 0755 : 0644, options.prepare.owner));
  const std::string where = into.shown(record.path);
  StoredHasher hasher(
      record.size, [&](std::uint64_t offset, std::span<const char> block) -> Result<void> {
        staged.bytes_written += block.size();
        if (staged.bytes_written > options.limits.max_bytes)
          return refuse(fmt::format("takes cache '{}' over {} bytes", staged.archived->name,
                                    options.limits.max_bytes));
        GL_TRY_VOID(check_room(into, block.size(), 0, options.reserve, shown, member.path));
        return write_at(file.get(), block, offset, where);
      });
  std::uint64_t next = 0;
  for (;;) {
    GL_TRY(const auto block, reader.read_block());
    if (!block) break;
    if (block->offset < next || block->offset > record.size ||
        block->data.size() > record.size - block->offset)
      return refuse(fmt::format("holds data past its {} bytes", record.size));
    GL_TRY_VOID(hasher.add(block->offset, block->data));
    next = block->offset + block->data.size();
  }
  GL_TRY(const auto content, hasher.finish());
  if (content != record.content)
    return refuse(
        "does not match the content digest in its manifest; the archive was altered or damaged");
  if (::ftruncate(file.get(), static_cast<off_t>(record.size)) != 0 || ::fsync(file.get()) != 0)
    return failf("Failed to write '{}': {}", where, std::strerror(errno));
  return {};
}

// Every member after the file lists, into its cache's private directory.
Result<void> extract(std::vector<Staged>& staged, TarReader& reader, const ImportOptions& options,
                     const std::string& shown) {
  const std::string prefix = std::string(kArchivedCachesDirectory) + "/";
  for (;;) {
    GL_TRY(const auto member, reader.next());
    if (!member) break;
    const auto refuse = [&](std::string_view why) {
      return failf("Refusing to import '{}': member '{}' {}", shown, member->path, why);
    };
    if (member->kind == MemberKind::other)
      return refuse(fmt::format("is a {}; an archive holds only regular files and directories",
                                member->kind_name));
    std::string path = member->path;
    if (member->kind == MemberKind::directory && path.size() > 1 && path.back() == '/')
      path.pop_back();
    if (auto problem = archived_path_problem(path)) return refuse("has " + *problem);
    if (path == kArchivedCachesDirectory && member->kind == MemberKind::directory) continue;
    if (!path.starts_with(prefix)) return refuse(fmt::format("is outside {}", prefix));
    const auto slash = path.find('/', prefix.size());
    const std::string name = path.substr(prefix.size(), slash - prefix.size());
    auto cache = std::find_if(staged.begin(), staged.end(),
                              [&](const Staged& one) { return one.archived->name == name; });
    if (cache == staged.end()) return refuse("belongs to no cache the manifest lists");
    if (slash == std::string::npos) {
      if (member->kind == MemberKind::directory) continue;  // the cache's own directory
      return refuse("is a file where the cache's directory belongs");
    }
    const std::string inside = path.substr(slash + 1);
    if (member->kind == MemberKind::directory) {
      // Made with the files in it; one that holds none would be a directory no digest covers.
      if (!cache->directories.contains(inside))
        return refuse("is a directory that holds none of the files the cache's list names");
      continue;
    }
    const auto& records = cache->records;
    const auto listed = std::lower_bound(
        records.begin(), records.end(), inside,
        [](const FileRecord& record, const std::string& one) { return record.path < one; });
    const auto index = static_cast<std::size_t>(listed - records.begin());
    if (listed == records.end() || listed->path != inside)
      return refuse(cache->directories.contains(inside)
                        ? "is both a file and a directory"
                        : "is not one of the files the cache's list names");
    if (index < cache->next) return refuse("appears twice");
    if (index > cache->next)
      return refuse(fmt::format("comes before '{}', which the cache's list names first",
                                member_of(*cache, records[cache->next].path)));
    GL_TRY_VOID(extract_file(*cache, reader, *member, *listed, options, shown));
    ++cache->next;
  }
  for (const auto& cache : staged)
    if (cache.next < cache.records.size())
      return failf("Refusing to import '{}': it ends before member '{}', which its list names",
                   shown, member_of(cache, cache.records[cache.next].path));
  return {};
}

Result<void> verify(const std::vector<Staged>& staged, const std::string& shown,
                    const DigestLimits& limits) {
  for (const auto& cache : staged) {
    GL_TRY(const auto digest, digest_tree(cache.sibling->root, "", limits));
    if (digest.over_limit || digest.sha256 != cache.archived->digest)
      return failf(
          "Refusing to import cache '{}' from '{}': what it holds ({} files, {} bytes) does not "
          "match the content digest in its manifest ({} files, {} bytes); the archive was "
          "altered or damaged",
          cache.archived->name, shown, digest.files, digest.bytes, cache.archived->files,
          cache.archived->bytes);
  }
  return {};
}

// The verified caches in place, one rename each. A directory outside the cache root is
// gpulaunch's by its record (device, inode, birth): the new one is recorded beside the old one
// before the swap and alone after it, so a crash in between leaves a recorded directory there.
Result<std::vector<ImportedCache>> swap_in(std::vector<Staged>& staged, const CacheRecords& records,
                                           const DirectoryOwner& owner) {
  std::vector<ImportedCache> imported;
  for (auto& cache : staged) {
    const ConfinedRoot& confined = cache.confined();
    const auto& relative = cache.target.relative;
    std::optional<CreatedDirectory> created;
    if (cache.target.own_root) {
      GL_TRY(const auto identity, cache.sibling->root.identity());
      GL_TRY(const auto birth, cache.sibling->root.birth());
      created = CreatedDirectory{cache.target.location.directory, identity, birth};
      GL_TRY_VOID(records.add_created(*created));
    }
    GL_TRY(const bool replaced, confined.swap_in(relative, *cache.sibling, owner));
    if (created) GL_TRY_VOID(records.record_created(*created));
    RemovedTree removed;
    if (replaced) {
      GL_TRY(removed, confined.remove_beside(relative, cache.sibling->name));
    }
    cache.sibling.reset();
    imported.push_back({cache.archived->name, cache.target.location.directory,
                        cache.archived->files, cache.archived->bytes,
                        removed.entries > 0 ? removed.entries - 1 : 0});
  }
  return imported;
}

std::string import_label(const std::string& name) {
  return "import-" + name;
}

// Opens each archived cache's confinement and its private directory, after removing what an
// import cut short left beside it.
Result<void> stage(std::vector<Staged>& staged, const ConfinedRoot& root,
                   const CacheRecords& records, const std::string& cache_root,
                   const ImportOptions& options, const std::string& shown) {
  for (auto& cache : staged) {
    cache.root = &root;
    if (cache.target.own_root) {
      GL_TRY(cache.own, open_own_root(cache.target));
      if (!cache.own)
        return failf("Failed to import cache '{}': '{}' does not exist", cache.archived->name,
                     cache.target.location.directory);
      GL_TRY_VOID(check_created(records, cache.target, *cache.own, cache_root));
    }
    const ConfinedRoot& confined = cache.confined();
    const std::string label = import_label(cache.archived->name);
    GL_TRY(const auto leftovers,
           confined.names_beside(cache.target.relative, std::string(kTrashPrefix) + label + "-"));
    for (const auto& leftover : leftovers)
      GL_TRY_VOID(confined.remove_beside(cache.target.relative, leftover.filename().string()));
    GL_TRY(cache.sibling, confined.make_sibling(cache.target.relative, label));
    // Every file and directory its list implies, before the first is made.
    GL_TRY_VOID(check_room(cache.sibling->root, 0, cache.records.size() + cache.directories.size(),
                           options.reserve, shown,
                           fmt::format("{}/{}/", kArchivedCachesDirectory, cache.archived->name)));
  }
  return {};
}

Result<std::vector<ImportedCache>> stage_and_swap(std::vector<Staged>& staged, TarReader& reader,
                                                  const ConfinedRoot& root,
                                                  const CacheRecords& records,
                                                  const ImportOptions& options,
                                                  const std::string& shown) {
  GL_TRY_VOID(stage(staged, root, records, root.path().string(), options, shown));
  GL_TRY_VOID(extract(staged, reader, options, shown));
  GL_TRY_VOID(verify(staged, shown, options.limits));
  return swap_in(staged, records, options.prepare.owner);
}

// What is left of the private directories when the import stops early.
void discard(std::vector<Staged>& staged) {
  for (auto& cache : staged)
    if (cache.sibling)
      (void)cache.confined().remove_beside(cache.target.relative, cache.sibling->name);
}

}  // namespace

Result<ImportReport> import_caches(const LaunchPlan& plan, const FingerprintInputs& inputs,
                                   const ImportOptions& options, int fd, const std::string& shown,
                                   const RemovalSink& on_removal) {
  GL_TRY(auto reader, TarReader::open(fd, shown));
  GL_TRY(const auto manifest, read_manifest(reader, shown));
  GL_TRY(const auto targets, cache_targets(plan));
  std::vector<Staged> staged;
  for (const auto& archived : manifest.caches) {
    auto target = std::find_if(targets.begin(), targets.end(), [&](const CacheTarget& one) {
      return one.location.name == archived.name;
    });
    if (target == targets.end())
      return failf("Refusing to import '{}': it holds cache '{}', which this profile does not use",
                   shown, archived.name);
    GL_TRY_VOID(check_facts(archived, *target, inputs, shown));
    if (archived.files > options.limits.max_files || archived.bytes > options.limits.max_bytes)
      return failf(
          "Refusing to import cache '{}' from '{}': {} files, {} bytes is over the "
          "limit of {} files, {} bytes",
          archived.name, shown, archived.files, archived.bytes, options.limits.max_files,
          options.limits.max_bytes);
    Staged cache;
    cache.archived = &archived;
    cache.target = *target;
    staged.push_back(std::move(cache));
  }
  GL_TRY_VOID(read_records(staged, reader, shown, options.limits));
  GL_TRY_VOID(plan_directories(staged, shown));

  ImportReport report;
  report.profile = manifest.profile;
  // The stamp must be this node's before anything is imported, or the next start would clear it.
  GL_TRY(report.prepared, prepare_caches(plan, inputs, options.prepare, on_removal));
  GL_TRY(auto records, CacheRecords::open(options.prepare.records));
  GL_TRY(auto root, ConfinedRoot::open(plan.cache_root));
  auto imported = stage_and_swap(staged, reader, root, records, options, shown);
  discard(staged);  // the private directories a refusal or a failed swap left
  GL_TRY(report.caches, std::move(imported));
  return report;
}

}  // namespace gl
