// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_import.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include <fmt/core.h>

#include "caches/archive_manifest.hpp"
#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "caches/safe_remove.hpp"
#include "util/safe_file.hpp"
#include "util/tar_archive.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// One archived cache on its way in: where it goes, the private directory it is extracted into,
// and what its members named so far.
struct Staged {
  const ArchivedCache* archived = nullptr;
  CacheTarget target;
  std::optional<ConfinedRoot> own;
  const ConfinedRoot* root = nullptr;
  std::optional<ConfinedRoot::Sibling> sibling;
  std::set<std::string> named;        // every member path, to refuse one given twice
  std::set<std::string> files;        // regular files
  std::set<std::string> directories;  // named or implied by a deeper member
  std::uint64_t files_written = 0;
  std::uint64_t bytes_written = 0;

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

// Records `path` (a file or a directory) in `staged`, refusing one named twice and one that is
// a file on one side and a directory on the other.
Result<void> admit(Staged& staged, const std::string& path, bool directory,
                   const std::string& member, const std::string& shown,
                   const DigestLimits& limits) {
  const auto refuse = [&](std::string_view why) {
    return failf("Refusing to import '{}': member '{}' {}", shown, member, why);
  };
  if (!staged.named.insert(path).second) return refuse("appears twice");
  if (staged.named.size() > limits.max_files)
    return failf("Refusing to import '{}': cache '{}' has over {} members", shown,
                 staged.archived->name, limits.max_files);
  if (staged.files.contains(path) || (!directory && staged.directories.contains(path)))
    return refuse("is both a file and a directory");
  for (std::string above = parent_of_path(path); !above.empty(); above = parent_of_path(above)) {
    if (staged.files.contains(above)) return refuse("is inside a path that is a file");
    if (!staged.directories.insert(above).second) break;  // its own ancestors are in already
  }
  if (directory)
    staged.directories.insert(path);
  else
    staged.files.insert(path);
  return {};
}

Result<void> extract_file(Staged& staged, TarReader& reader, const ArchiveMember& member,
                          const std::string& path, const DirectoryOwner& owner,
                          const std::string& shown, const DigestLimits& limits) {
  const ConfinedRoot& into = staged.sibling->root;
  if (const auto parent = parent_of_path(path); !parent.empty())
    GL_TRY_VOID(into.make_directories(parent, owner));
  GL_TRY(auto file, into.create_file(path, member.executable ? 0755 : 0644, owner));
  if (++staged.files_written > staged.archived->files)
    return failf("Refusing to import '{}': cache '{}' holds more files than its manifest says",
                 shown, staged.archived->name);
  std::vector<char> buffer(1 << 20);
  for (;;) {
    GL_TRY(const auto got, reader.read_data(buffer));
    if (got == 0) break;
    staged.bytes_written += got;
    if (staged.bytes_written > limits.max_bytes)
      return failf("Refusing to import '{}': cache '{}' is over {} bytes", shown,
                   staged.archived->name, limits.max_bytes);
    if (staged.bytes_written > staged.archived->bytes)
      return failf("Refusing to import '{}': cache '{}' holds more bytes than its manifest says",
                   shown, staged.archived->name);
    GL_TRY_VOID(write_all(file.get(), {buffer.data(), got}, into.shown(path)));
  }
  if (::fsync(file.get()) != 0)
    return failf("Failed to sync '{}': {}", into.shown(path), std::strerror(errno));
  return {};
}

// Every member after the manifest, into its cache's private directory.
Result<void> extract(std::vector<Staged>& staged, TarReader& reader, const DirectoryOwner& owner,
                     const std::string& shown, const DigestLimits& limits) {
  const std::string prefix = std::string(kArchivedCachesDirectory) + "/";
  for (;;) {
    GL_TRY(const auto member, reader.next());
    if (!member) return {};
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
    const bool directory = member->kind == MemberKind::directory;
    GL_TRY_VOID(admit(*cache, inside, directory, member->path, shown, limits));
    if (directory)
      GL_TRY_VOID(cache->sibling->root.make_directories(inside, owner));
    else
      GL_TRY_VOID(extract_file(*cache, reader, *member, inside, owner, shown, limits));
  }
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
                   const CacheRecords& records, const std::string& cache_root) {
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
  }
  return {};
}

Result<std::vector<ImportedCache>> stage_and_swap(std::vector<Staged>& staged, TarReader& reader,
                                                  const ConfinedRoot& root,
                                                  const CacheRecords& records,
                                                  const ImportOptions& options,
                                                  const std::string& shown) {
  GL_TRY_VOID(stage(staged, root, records, root.path().string()));
  GL_TRY_VOID(extract(staged, reader, options.prepare.owner, shown, options.limits));
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
