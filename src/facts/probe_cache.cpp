// SPDX-License-Identifier: Apache-2.0
#include "facts/probe_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "util/safe_file.hpp"

namespace gl {
namespace {

constexpr size_t kMaxCacheBytes = 1 << 20;
constexpr size_t kMaxEntries = 256;  // distinct nvcc binaries a node could have, with room

long long nanoseconds(const struct timespec& time) {
  return static_cast<long long>(time.tv_sec) * 1'000'000'000LL + time.tv_nsec;
}

nlohmann::json to_json(const ProgramIdentity& program, const NvccAnswer& answer) {
  nlohmann::json entry{{"path", program.path},         {"device", program.device},
                       {"inode", program.inode},       {"size", program.size},
                       {"mtime_ns", program.mtime_ns}, {"ctime_ns", program.ctime_ns},
                       {"problems", answer.problems}};
  entry["version"] = answer.version ? nlohmann::json(*answer.version) : nlohmann::json(nullptr);
  entry["archs"] = answer.archs ? nlohmann::json(*answer.archs) : nlohmann::json(nullptr);
  return entry;
}

// One entry; nullopt when any field is missing or of the wrong type (the entry is dropped).
std::optional<std::pair<ProgramIdentity, NvccAnswer>> from_json(const nlohmann::json& entry) {
  try {
    ProgramIdentity program{
        entry.at("path").get<std::string>(),         entry.at("device").get<unsigned long long>(),
        entry.at("inode").get<unsigned long long>(), entry.at("size").get<long long>(),
        entry.at("mtime_ns").get<long long>(),       entry.at("ctime_ns").get<long long>()};
    NvccAnswer answer;
    if (const auto& version = entry.at("version"); !version.is_null())
      answer.version = version.get<std::string>();
    if (const auto& archs = entry.at("archs"); !archs.is_null())
      answer.archs = archs.get<std::vector<int>>();
    answer.problems = entry.at("problems").get<std::vector<std::string>>();
    return std::pair{std::move(program), std::move(answer)};
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<ProgramIdentity> identify_program(const std::filesystem::path& host_path,
                                                const std::string& node_path) {
  struct stat info {};
  if (::stat(host_path.c_str(), &info) != 0) return std::nullopt;
  return ProgramIdentity{node_path,
                         static_cast<unsigned long long>(info.st_dev),
                         static_cast<unsigned long long>(info.st_ino),
                         static_cast<long long>(info.st_size),
                         nanoseconds(info.st_mtim),
                         nanoseconds(info.st_ctim)};
}

ProbeCache::ProbeCache(std::optional<std::filesystem::path> file) : file_(std::move(file)) {}

void ProbeCache::load() const {
  if (loaded_) return;
  loaded_ = true;
  if (!file_) return;
  // Only what root wrote, where only root could have replaced it, is believed.
  if (user_writable_reason(*file_)) return;
  auto read = read_regular_nofollow(*file_, kMaxCacheBytes);
  if (!read || !*read || (*read)->owner != 0) return;
  // Four levels of nesting is all a cache file has; deeper input is dropped, not built.
  auto json = nlohmann::json::parse(
      (*read)->content,
      [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) { return depth <= 8; },
      /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return;
  auto entries = json.find("nvcc");
  if (entries == json.end() || !entries->is_array()) return;
  for (const auto& entry : *entries)
    if (auto parsed = from_json(entry)) answers_.insert(std::move(*parsed));
}

const NvccAnswer* ProbeCache::find(const ProgramIdentity& program) const {
  load();
  auto found = answers_.find(program);
  return found == answers_.end() ? nullptr : &found->second;
}

void ProbeCache::store(const ProgramIdentity& program, NvccAnswer answer) {
  load();
  // Entries of files that changed since are never found again: drop the same path's.
  std::erase_if(answers_, [&](const auto& entry) { return entry.first.path == program.path; });
  if (answers_.size() >= kMaxEntries) answers_.erase(answers_.begin());
  answers_[program] = std::move(answer);
  changed_ = true;
}

void ProbeCache::save() const {
  if (!file_ || !changed_ || ::geteuid() != 0) return;
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& [program, answer] : answers_) entries.push_back(to_json(program, answer));
  nlohmann::json document{{"nvcc", entries}};
  auto directory = open_root_owned_directory(file_->parent_path());
  if (!directory) return;
  (void)write_atomically_at(directory->get(), file_->filename().string(), document.dump(1) + "\n",
                            0644, file_->string());
}

}  // namespace gl
