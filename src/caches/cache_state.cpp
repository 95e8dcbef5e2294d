#include "caches/cache_state.hpp"

#include <system_error>

#include "util/atomic_file.hpp"

namespace gl {
namespace {

constexpr std::string_view kStampHeader = "# gpulaunch cache fingerprint v1";
constexpr size_t kMaxStampBytes = 64 * 1024;

std::string normal(const std::string& path) {
  std::string text = std::filesystem::path(path).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

bool is_under(const std::string& path, const std::string& root) {
  return path.size() > root.size() && path.starts_with(root) &&
         (root == "/" || path[root.size()] == '/');
}

std::string unescape(std::string_view value) {
  std::string text;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) {
      ++i;
      text += value[i] == 'n' ? '\n' : value[i];
    } else {
      text += value[i];
    }
  }
  return text;
}

}  // namespace

std::string stamp_text(const FingerprintInputs& inputs) {
  return std::string(kStampHeader) + "\nhash=" + fingerprint_hex(fingerprint_hash(inputs)) + "\n" +
         canonical_text(fingerprint_fields(inputs));
}

std::optional<Stamp> parse_stamp(std::string_view text) {
  Stamp stamp;
  bool header = false;
  while (!text.empty()) {
    auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!header) {
      if (line != kStampHeader) return std::nullopt;
      header = true;
      continue;
    }
    auto equals = line.find('=');
    if (equals == std::string_view::npos) {
      if (line.empty()) continue;
      return std::nullopt;
    }
    std::string name(line.substr(0, equals));
    std::string value = unescape(line.substr(equals + 1));
    if (name == "hash")
      stamp.hash = std::move(value);
    else
      stamp.fields.push_back({std::move(name), std::move(value)});
  }
  if (!header || stamp.hash.empty()) return std::nullopt;
  return stamp;
}

Result<std::optional<Stamp>> read_stamp(const std::filesystem::path& cache_root) {
  const auto path = cache_root / kStampName;
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, error)))
    return std::optional<Stamp>{};
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, error)))
    return std::optional<Stamp>{};  // not ours: the next stamp replaces it
  auto text = read_file(path, kMaxStampBytes);
  if (!text) return std::unexpected(text.error());
  return parse_stamp(*text);
}

Result<void> write_stamp(const std::filesystem::path& cache_root, const FingerprintInputs& inputs) {
  return write_file_atomically(cache_root / kStampName, stamp_text(inputs), 0644);
}

Result<std::vector<CacheTarget>> cache_targets(const LaunchPlan& plan) {
  const std::string root = normal(plan.cache_root);
  std::vector<CacheTarget> targets;
  for (const auto& location : plan.caches) {
    CacheTarget target{location, find_jit_cache(location.name), false, {}};
    const std::string directory = normal(location.directory);
    target.location.directory = directory;
    if (directory == root || is_under(root, directory))
      return failf("Refusing cache '{}' at '{}': it contains the cache root '{}'", location.name,
                   directory, root);
    if (is_under(directory, root))
      target.relative = directory.substr(root.size() + 1);
    else
      target.own_root = true;
    targets.push_back(std::move(target));
  }
  return targets;
}

Result<std::optional<ConfinedRoot>> open_own_root(const CacheTarget& target) {
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(target.location.directory, error)))
    return std::optional<ConfinedRoot>{};
  auto root = ConfinedRoot::open(target.location.directory);
  if (!root) return std::unexpected(root.error());
  return std::optional<ConfinedRoot>(std::move(*root));
}

Result<TreeUsage> cache_usage(const ConfinedRoot& root, const CacheTarget& target) {
  auto usage = root.usage(target.relative);
  if (!usage) return usage;
  if (target.own_root) {
    // Leftover trash in the directory is not cache content.
    auto trash = root.trash_in("");
    if (trash && !trash->empty()) {
      for (const auto& name : *trash) {
        auto part = root.usage(name);
        if (part) {
          usage->bytes -= std::min(usage->bytes, part->bytes);
          usage->entries -= std::min(usage->entries, part->entries + 1);
        }
      }
    }
  }
  return usage;
}

std::string_view cache_state_name(CacheState state) {
  switch (state) {
    case CacheState::current:
      return "current";
    case CacheState::stale:
      return "stale";
    case CacheState::empty:
      return "empty";
    case CacheState::missing:
      return "missing";
  }
  return "?";
}

CacheState classify(const TreeUsage& usage, bool keys_itself, bool stamp_matches) {
  if (!usage.exists) return CacheState::missing;
  if (!usage.is_directory) return CacheState::stale;  // a file or symlink where a cache belongs
  if (usage.entries == 0) return CacheState::empty;
  return keys_itself || stamp_matches ? CacheState::current : CacheState::stale;
}

Result<CacheReport> inspect_caches(const LaunchPlan& plan, const FingerprintInputs& inputs) {
  CacheReport report;
  report.root = normal(plan.cache_root);
  report.fingerprint = fingerprint_hex(fingerprint_hash(inputs));
  auto targets = cache_targets(plan);
  if (!targets) return std::unexpected(targets.error());

  std::error_code error;
  const bool root_exists =
      std::filesystem::exists(std::filesystem::symlink_status(report.root, error));
  std::optional<ConfinedRoot> root;
  if (root_exists) {
    auto opened = ConfinedRoot::open(report.root);
    if (!opened) return std::unexpected(opened.error());
    root.emplace(std::move(*opened));
    auto stamp = read_stamp(report.root);
    if (!stamp) return std::unexpected(stamp.error());
    if (*stamp) {
      report.stamped = (*stamp)->hash;
      if ((*stamp)->hash != report.fingerprint)
        report.change = describe_changes((*stamp)->fields, fingerprint_fields(inputs));
    } else {
      report.change = "no fingerprint stamp";
    }
  }
  const bool matches = report.stamped == report.fingerprint;
  for (const auto& target : *targets) {
    CacheStatus status{target.location.name,
                       target.location.directory,
                       target.location.keys_itself,
                       {},
                       CacheState::missing};
    std::optional<ConfinedRoot> own;
    if (target.own_root) {
      auto opened = open_own_root(target);
      if (!opened) return std::unexpected(opened.error());
      own = std::move(*opened);
    }
    const ConfinedRoot* confined =
        target.own_root ? (own ? &*own : nullptr) : (root ? &*root : nullptr);
    if (confined) {
      auto usage = cache_usage(*confined, target);
      if (!usage) return std::unexpected(usage.error());
      status.usage = *usage;
    }
    status.state = classify(status.usage, status.keys_itself, matches);
    report.caches.push_back(std::move(status));
  }
  return report;
}

}  // namespace gl
