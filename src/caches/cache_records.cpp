// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_records.hpp"

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

constexpr std::string_view kStampFile = "fingerprint";
constexpr std::string_view kCreatedFile = "created-directories";
constexpr std::string_view kStampHeader = "# gpulaunch cache fingerprint v2";
constexpr std::string_view kOwnerFile = "owner";
constexpr std::string_view kOwnerHeader = "# gpulaunch cache owner v1";
constexpr std::string_view kCreatedHeader = "# gpulaunch created cache directories v1";
constexpr size_t kMaxRecordBytes = 64 * 1024;
constexpr mode_t kRecordMode = 0644;

// The lines of `text`, each ended by '\n'; nullopt when the last one is not.
std::optional<std::vector<std::string_view>> lines_of(std::string_view text) {
  if (text.empty() || text.back() != '\n') return std::nullopt;
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto newline = text.find('\n');
    lines.push_back(text.substr(0, newline));
    text.remove_prefix(newline + 1);
  }
  return lines;
}

// "name=value" with `name` as expected; the unescaped value.
std::optional<std::string> value_of(std::string_view line, std::string_view name) {
  if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != '=')
    return std::nullopt;
  return unescape_value(line.substr(name.size() + 1));
}

bool is_field_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z');
  });
}

bool is_hex16(std::string_view text) {
  return text.size() == 16 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool is_normal_absolute(std::string_view path) {
  return path.starts_with('/') && std::filesystem::path(path).lexically_normal().string() == path &&
         (path.size() == 1 || !path.ends_with('/'));
}

template <typename Number>
std::optional<Number> number_of(std::string_view text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::filesystem::path cache_records_directory(std::string_view profile,
                                              const std::filesystem::path& state_root) {
  return state_root /
         state_paths::cache_stamp_directory(profile).lexically_relative(state_paths::kStateRoot);
}

Stamp make_stamp(const std::string& cache_root, const FingerprintInputs& inputs) {
  return {cache_root, fingerprint_hex(fingerprint_hash(inputs)), fingerprint_fields(inputs)};
}

std::string stamp_text(const Stamp& stamp) {
  return std::string(kStampHeader) + "\nroot=" + escape_value(stamp.root) + "\nhash=" + stamp.hash +
         "\n" + canonical_text(stamp.fields);
}

std::optional<Stamp> parse_stamp(std::string_view text) {
  auto lines = lines_of(text);
  if (!lines || lines->size() < 3 || (*lines)[0] != kStampHeader) return std::nullopt;
  Stamp stamp;
  auto root = value_of((*lines)[1], "root");
  auto hash = value_of((*lines)[2], "hash");
  if (!root || !is_normal_absolute(*root) || !hash || !is_hex16(*hash)) return std::nullopt;
  stamp.root = std::move(*root);
  stamp.hash = std::move(*hash);
  for (size_t i = 3; i < lines->size(); ++i) {
    const auto line = (*lines)[i];
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const auto name = line.substr(0, equals);
    if (!is_field_name(name) || std::any_of(stamp.fields.begin(), stamp.fields.end(),
                                            [&](const auto& field) { return field.name == name; }))
      return std::nullopt;
    auto value = unescape_value(line.substr(equals + 1));
    if (!value) return std::nullopt;
    stamp.fields.push_back({std::string(name), std::move(*value)});
  }
  // The hash must be of the fields written with it: a stamp is all or nothing.
  if (fingerprint_hex(fingerprint_hash(stamp.fields)) != stamp.hash) return std::nullopt;
  return stamp;
}

std::string created_text(const std::vector<CreatedDirectory>& directories) {
  std::string text = std::string(kCreatedHeader) + "\n";
  for (const auto& directory : directories)
    text += std::to_string(directory.identity.device) + " " +
            std::to_string(directory.identity.inode) + " " + std::to_string(directory.birth) + " " +
            escape_value(directory.path) + "\n";
  return text;
}

std::optional<std::vector<CreatedDirectory>> parse_created(std::string_view text) {
  auto lines = lines_of(text);
  if (!lines || (*lines)[0] != kCreatedHeader) return std::nullopt;
  std::vector<CreatedDirectory> directories;
  for (size_t i = 1; i < lines->size(); ++i) {
    std::string_view line = (*lines)[i];
    const auto first = line.find(' ');
    if (first == std::string_view::npos) return std::nullopt;
    const auto second = line.find(' ', first + 1);
    if (second == std::string_view::npos) return std::nullopt;
    auto device = number_of<dev_t>(line.substr(0, first));
    auto inode = number_of<ino_t>(line.substr(first + 1, second - first - 1));
    // "DEVICE INODE BIRTH PATH"; records written before the birth time was kept have no BIRTH
    // (a path is absolute, so its first character tells which).
    std::optional<BirthTime> birth = BirthTime{0};
    size_t path_at = second + 1;
    if (path_at < line.size() && line[path_at] != '/') {
      const auto third = line.find(' ', path_at);
      if (third == std::string_view::npos) return std::nullopt;
      birth = number_of<BirthTime>(line.substr(path_at, third - path_at));
      path_at = third + 1;
    }
    auto path = unescape_value(line.substr(path_at));
    if (!device || !inode || !birth || *birth < 0 || !path || !is_normal_absolute(*path))
      return std::nullopt;
    directories.push_back({std::move(*path), {*device, *inode}, *birth});
  }
  return directories;
}

std::string owner_text(const DirectoryOwner& owner) {
  return fmt::format("{}\nuid={}\ngid={}\n", kOwnerHeader, owner.uid, owner.gid);
}

std::optional<DirectoryOwner> parse_owner(std::string_view text) {
  auto field = [&](std::string_view name) -> std::optional<unsigned long> {
    const std::string prefix = "\n" + std::string(name) + "=";
    auto at = text.find(prefix);
    if (at == std::string_view::npos) return std::nullopt;
    auto start = at + prefix.size();
    auto end = text.find('\n', start);
    if (end == std::string_view::npos || end == start || end - start > 10) return std::nullopt;
    unsigned long value = 0;
    for (char c : text.substr(start, end - start)) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + static_cast<unsigned long>(c - '0');
    }
    if (value > 0xFFFFFFFEul) return std::nullopt;  // (uid_t)-1 is "no change", never an owner
    return value;
  };
  if (!text.starts_with(std::string(kOwnerHeader) + "\n")) return std::nullopt;
  auto uid = field("uid");
  auto gid = field("gid");
  if (!uid || !gid || text != owner_text({static_cast<uid_t>(*uid), static_cast<gid_t>(*gid)}))
    return std::nullopt;
  return DirectoryOwner{static_cast<uid_t>(*uid), static_cast<gid_t>(*gid)};
}

Result<CacheRecords> CacheRecords::open(const std::filesystem::path& directory) {
  // Root's records for a unit; an ordinary user's own (`run --foreground`'s state directory).
  const uid_t caller = ::geteuid();
  GL_TRY(auto fd, caller == 0 ? open_root_owned_directory(directory)
                              : open_user_owned_directory(directory, caller));
  return CacheRecords(directory, std::move(fd));
}

Result<std::optional<CacheRecords>> CacheRecords::open_existing(
    const std::filesystem::path& directory) {
  auto fd = open_directory_nofollow(directory);
  if (!fd) {
    if (fd.error().errno_value == ENOENT) return std::optional<CacheRecords>{};
    return std::unexpected(fd.error());
  }
  return std::optional<CacheRecords>(CacheRecords(directory, std::move(*fd)));
}

Result<std::optional<CacheRecords>> CacheRecords::open_as_caller(
    const std::filesystem::path& directory) {
  if (::geteuid() != 0) return open_existing(directory);
  GL_TRY(auto records, open(directory));
  return std::optional<CacheRecords>(std::move(records));
}

std::string CacheRecords::shown(std::string_view name) const {
  return (path_ / name).string();
}

Result<std::optional<Stamp>> CacheRecords::stamp() const {
  GL_TRY(auto read, read_regular_at(fd_.get(), kStampFile, kMaxRecordBytes, shown(kStampFile)));
  if (!read) return std::optional<Stamp>{};
  return parse_stamp(read->content);
}

Result<void> CacheRecords::write_stamp(const Stamp& stamp) const {
  return write_atomically_at(fd_.get(), kStampFile, stamp_text(stamp), kRecordMode,
                             shown(kStampFile));
}

Result<void> CacheRecords::remove_stamp() const {
  const std::string name(kStampFile);
  if (::unlinkat(fd_.get(), name.c_str(), 0) != 0 && errno != ENOENT)
    return failf("Failed to remove '{}': {}", shown(kStampFile), std::strerror(errno));
  if (::fsync(fd_.get()) != 0)  // gone for good before any cache is touched
    return failf("Failed to sync '{}': {}", path_.string(), std::strerror(errno));
  return {};
}

Result<std::vector<CreatedDirectory>> CacheRecords::created() const {
  GL_TRY(auto read, read_regular_at(fd_.get(), kCreatedFile, kMaxRecordBytes, shown(kCreatedFile)));
  if (!read) return std::vector<CreatedDirectory>{};
  return parse_created(read->content).value_or(std::vector<CreatedDirectory>{});
}

Result<void> CacheRecords::record_created(const CreatedDirectory& directory) const {
  GL_TRY(auto directories, created());
  std::erase_if(directories, [&](const auto& other) { return other.path == directory.path; });
  directories.push_back(directory);
  return write_atomically_at(fd_.get(), kCreatedFile, created_text(directories), kRecordMode,
                             shown(kCreatedFile));
}

Result<void> CacheRecords::add_created(const CreatedDirectory& directory) const {
  GL_TRY(auto directories, created());
  directories.push_back(directory);
  return write_atomically_at(fd_.get(), kCreatedFile, created_text(directories), kRecordMode,
                             shown(kCreatedFile));
}

Result<std::optional<DirectoryOwner>> CacheRecords::owner() const {
  GL_TRY(auto read, read_regular_at(fd_.get(), kOwnerFile, kMaxRecordBytes, shown(kOwnerFile)));
  if (!read) return std::optional<DirectoryOwner>{};
  return parse_owner(read->content);
}

Result<void> CacheRecords::write_owner(const DirectoryOwner& owner) const {
  return write_atomically_at(fd_.get(), kOwnerFile, owner_text(owner), kRecordMode,
                             shown(kOwnerFile));
}

Result<bool> CacheRecords::was_created(const std::string& path, const FileIdentity& identity,
                                       BirthTime birth) const {
  GL_TRY(const auto directories, created());
  return std::any_of(directories.begin(), directories.end(), [&](const auto& directory) {
    return directory.path == path && directory.identity == identity &&
           (directory.birth == 0 || birth == 0 || directory.birth == birth);
  });
}

}  // namespace gl
