// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_export.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "util/did_you_mean.hpp"
#include "util/sha256.hpp"
#include "util/tar_archive.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// A cache to export, its confinement open.
struct Source {
  CacheTarget target;
  std::optional<ConfinedRoot> own;
  const ConfinedRoot* root = nullptr;  // the cache root's, when not own
  ArchivedCache archived;
  std::string records;  // its digest's records: the archive's file list for it

  const ConfinedRoot* confined() const { return target.own_root ? (own ? &*own : nullptr) : root; }
};

std::string changed(const std::string& name) {
  return fmt::format(
      "Failed to export cache '{}': it changed while it was exported (is its engine running? "
      "`gpulaunch down` it first)",
      name);
}

Result<void> check_names(const std::vector<CacheTarget>& targets,
                         const std::vector<std::string>& names) {
  std::vector<std::string> known;
  for (const auto& target : targets) known.push_back(target.location.name);
  for (const auto& name : names)
    if (std::find(known.begin(), known.end(), name) == known.end())
      return failf("Unknown cache '{}'{}; known: {}", name, did_you_mean_suffix(name, known),
                   fmt::format("{}", fmt::join(known, ", ")));
  return {};
}

// Copies exactly `size` bytes of `file` into the current member.
Result<void> copy_content(int file, std::uint64_t size, TarWriter& writer, const std::string& shown,
                          const std::string& name) {
  std::vector<char> buffer(1 << 20);
  std::uint64_t left = size;
  while (left > 0) {
    const ssize_t got =
        ::read(file, buffer.data(),
               static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size())));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return failf("Failed to read '{}': {}", shown, std::strerror(errno));
    if (got == 0) return fail(changed(name));  // shrunk since its header was written
    GL_TRY_VOID(writer.write_data({buffer.data(), static_cast<std::size_t>(got)}));
    left -= static_cast<std::uint64_t>(got);
  }
  return {};
}

Result<void> write_cache(const Source& source, TarWriter& writer, const DigestLimits& limits) {
  const ConfinedRoot* confined = source.confined();
  if (!confined) return {};
  const std::string& relative = source.target.relative;
  std::vector<std::string> paths;
  GL_TRY_VOID(confined->for_each_file(relative, [&](const std::string& path) {
    if (paths.size() <= limits.max_files) paths.push_back(path);
  }));
  if (paths.size() > limits.max_files) return fail(changed(source.archived.name));
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    const std::string inside = relative.empty() ? path : path.substr(relative.size() + 1);
    GL_TRY(auto file, confined->open_file(path));
    struct stat info {};
    if (::fstat(file.get(), &info) != 0)
      return failf("Failed to stat '{}': {}", confined->shown(path), std::strerror(errno));
    const std::string member =
        fmt::format("{}/{}/{}", kArchivedCachesDirectory, source.archived.name, inside);
    GL_TRY_VOID(writer.add_file(member, static_cast<std::uint64_t>(info.st_size),
                                (info.st_mode & 0111) != 0));
    GL_TRY_VOID(copy_content(file.get(), static_cast<std::uint64_t>(info.st_size), writer,
                             confined->shown(path), source.archived.name));
  }
  return {};
}

}  // namespace

Result<ArchiveManifest> export_caches(const LaunchPlan& plan, const std::string& profile,
                                      const FingerprintInputs& inputs,
                                      const std::filesystem::path& records_directory,
                                      const std::vector<std::string>& names, int fd,
                                      const std::string& shown, const DigestLimits& limits) {
  GL_TRY(auto targets, cache_targets(plan));
  GL_TRY_VOID(check_names(targets, names));
  GL_TRY(auto records, CacheRecords::open_existing(records_directory));
  const std::string cache_root = std::filesystem::path(plan.cache_root).lexically_normal().string();
  GL_TRY(auto root, open_if_present(plan.cache_root));
  std::vector<Source> sources;
  std::uint64_t records_bytes = 0;
  for (auto& target : targets) {
    const std::string& name = target.location.name;
    if (!names.empty() && std::find(names.begin(), names.end(), name) == names.end()) continue;
    Source source{target, std::nullopt, root ? &*root : nullptr, {}, {}};
    if (target.own_root) {
      GL_TRY(source.own, open_own_root(target));
      if (source.own && !records)
        return failf(
            "Refusing to export cache '{}' from '{}': there is no record that gpulaunch "
            "created it, and it is not under the cache root '{}'",
            name, target.location.directory, cache_root);
      if (source.own) GL_TRY_VOID(check_created(*records, target, *source.own, cache_root));
    }
    TreeDigest digest;
    if (const ConfinedRoot* confined = source.confined()) {
      GL_TRY(digest, digest_tree(*confined, target.relative, limits, &source.records));
    } else {
      digest.sha256 = sha256_hex("");
    }
    if (digest.over_limit)
      return failf(
          "Refusing to export cache '{}' from '{}': over {} files or {} bytes stored, "
          "too large to digest",
          name, target.location.directory, limits.max_files, limits.max_bytes);
    // Stored bytes bound the digest; the archive carries every file's apparent size, holes
    // included, so that is bounded too: a sparse terabyte is refused here, unread.
    if (digest.bytes > limits.max_bytes)
      return failf(
          "Refusing to export cache '{}' from '{}': its files' apparent sizes add up to {} bytes, "
          "over the limit of {} (a sparse file counts its holes)",
          name, target.location.directory, digest.bytes, limits.max_bytes);
    records_bytes += source.records.size();
    if (records_bytes > kMaxRecordsBytes)
      return failf(
          "Refusing to export cache '{}' from '{}': the archive's file lists would be over {} "
          "bytes",
          name, target.location.directory, kMaxRecordsBytes);
    if (names.empty() && digest.files == 0) continue;  // nothing compiled there to carry over
    source.archived = {name,
                       cache_fingerprint(target.entry, inputs),
                       cache_fingerprint_fields(target.entry, inputs),
                       digest.sha256,
                       digest.files,
                       digest.bytes};
    sources.push_back(std::move(source));
  }
  ArchiveManifest manifest{profile, {}};
  for (const auto& source : sources) manifest.caches.push_back(source.archived);

  GL_TRY(auto writer, TarWriter::open(fd, shown));
  const std::string text = manifest_text(manifest);
  GL_TRY_VOID(writer.add_file(kManifestMember, text.size(), false));
  GL_TRY_VOID(writer.write_data(text));
  for (const auto& source : sources) {
    GL_TRY_VOID(writer.add_file(fmt::format("{}/{}", kRecordsDirectory, source.archived.name),
                                source.records.size(), false));
    GL_TRY_VOID(writer.write_data(source.records));
  }
  for (const auto& source : sources) {
    // Checked before anything of it is written: import refuses the same names.
    if (const ConfinedRoot* confined = source.confined()) {
      std::optional<std::string> problem;
      GL_TRY_VOID(confined->for_each_file(source.target.relative, [&](const std::string& path) {
        const std::string& relative = source.target.relative;
        const std::string inside = relative.empty() ? path : path.substr(relative.size() + 1);
        if (!problem)
          if (auto why = archived_path_problem(inside))
            problem = fmt::format("Refusing to export cache '{}': '{}' has {}",
                                  source.archived.name, confined->shown(path), *why);
      }));
      if (problem) return fail(*problem);
    }
    GL_TRY_VOID(write_cache(source, writer, limits));
  }
  GL_TRY_VOID(writer.finish());
  // What was written is what the manifest says only if nothing changed meanwhile.
  for (const auto& source : sources) {
    const ConfinedRoot* confined = source.confined();
    if (!confined) continue;
    GL_TRY(const auto again, digest_tree(*confined, source.target.relative, limits));
    if (again.sha256 != source.archived.digest) return fail(changed(source.archived.name));
  }
  return manifest;
}

}  // namespace gl
