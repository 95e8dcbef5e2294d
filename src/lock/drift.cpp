// SPDX-License-Identifier: Apache-2.0
#include "lock/drift.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>

#include <fmt/core.h>

namespace gl {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kNone = "(none)";

constexpr std::string_view kCaches = "caches.";

// A cache's content (digest, files, bytes): a JIT cache grows as the engine compiles, so a
// different content is no drift of the deployment; verify shows it apart (cache_notes).
bool cache_content(const std::string& key) {
  return key.starts_with(kCaches) &&
         (key.ends_with(".digest") || key.ends_with(".files") || key.ends_with(".bytes"));
}

bool informational(const std::string& key) {
  return key == "gpulaunch_lock" || key == "profile.file" || key == "profile.merged" ||
         cache_content(key);
}

bool both_have(const Json& a, const Json& b, const char* section) {
  return a.is_object() && b.is_object() && a.contains(section) && b.contains(section);
}

bool both_have_caches(const Json& a, const Json& b) {
  return both_have(a, b, "caches");
}

std::string leaf_text(const Json& value) {
  if (value.is_null()) return std::string(kNone);
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

void flatten(const Json& value, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object()) {  // an empty one (a model without files) records nothing
    for (const auto& [key, child] : value.items())
      flatten(child, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  if (!informational(prefix)) out.emplace_back(prefix, leaf_text(value));
}

struct Reason {
  std::string_view prefix;
  std::string_view why;
};

// Longest prefix wins: more specific keys come first.
constexpr std::array kReasons{
    Reason{"profile.name", "a different profile: another service, argv and environment"},
    Reason{"profile.sha256",
           "the merged profile changed: engine flags, parallelism, environment or limits differ"},
    Reason{"node.driver.version",
           "the driver loads every kernel: another one may refuse the CUDA that torch and the "
           "toolkit were built for"},
    Reason{"node.driver.cuda",
           "the newest CUDA the driver runs: kernels built for a newer CUDA fail to load"},
    Reason{"node.gpu.model",
           "memory fraction, batch sizes and kernel choices were sized and tested on this GPU"},
    Reason{"node.gpu.arch",
           "kernels are compiled per architecture: JIT caches rebuild, prebuilt kernels may be "
           "missing"},
    Reason{"node.gpu.count", "the profile's parallelism needs this many GPUs"},
    Reason{"node.toolkit.path",
           "CUDA_HOME and PATH point JIT compilers (FlashInfer, DeepGEMM, Triton) at another nvcc"},
    Reason{"node.toolkit.version",
           "JIT kernels compile with this nvcc: FlashInfer gates GPU architectures on its "
           "version and the JIT caches are keyed to it"},
    Reason{"node.toolkits.",
           "JIT compilers find this toolkit through CUDA_HOME, PATH or /usr/local/cuda"},
    Reason{"node.python.torch_cuda",
           "the CUDA torch was built for: it must match the driver and the JIT toolkit"},
    Reason{"node.python.torch", "the engine's kernels and extensions are built against this torch"},
    Reason{"node.python.flashinfer",
           "attention and sampling kernels; its JIT gates depend on nvcc and the architecture"},
    Reason{"node.python.triton", "Triton kernels compile at run time with this version"},
    Reason{"node.python.engine",
           "the engine itself: flags, defaults and kernels differ between versions"},
    Reason{"node.python.", "a package the engine imports"},
    Reason{"node.image.digest",
           "another image under the same reference: its engine, torch, CUDA and kernels may all "
           "differ, and the JIT caches were built by the locked one"},
    Reason{"node.image.id", "another local image: what podman runs is not what was locked"},
    Reason{"node.image.reference", "the profile names another image"},
    Reason{"model.path", "the engine loads another directory"},
    Reason{"model.id", "the engine downloads another model"},
    Reason{"model.revision", "another revision of the model: other weights or tokenizer"},
    Reason{"model.sha256",
           "another model: its config, tokenizer or weight index changed, answers differ"},
    Reason{"model.files.", "this file of the model changed"},
    Reason{"caches.",
           "the facts this cache's entries depend on changed: they are stale, and the next "
           "start clears the cache"},
    Reason{"cache_archive.sha256",
           "another cache archive than the lock names: the caches it seeds were compiled from "
           "something else"},
    Reason{"unit.name", "systemd runs another unit"},
    Reason{"unit.node_rank", "this node takes another rank in the group"},
    Reason{"unit.sha256", "systemd would run a different unit: argv, environment or limits differ"},
};

std::string pad(const std::string& text, size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

std::string table(const std::vector<std::array<std::string, 4>>& lines) {
  std::array<size_t, 3> widths{};
  for (const auto& line : lines)
    for (size_t column = 0; column < widths.size(); ++column)
      widths[column] = std::max(widths[column], line[column].size());
  std::string text;
  for (const auto& line : lines) {
    std::string row;
    for (size_t column = 0; column < widths.size(); ++column)
      row += pad(line[column], widths[column]) + "  ";
    row += line[3];
    while (!row.empty() && row.back() == ' ') row.pop_back();
    text += row + "\n";
  }
  return text;
}

}  // namespace

std::string why_it_matters(std::string_view key) {
  for (const auto& reason : kReasons)
    if (key == reason.prefix || (reason.prefix.ends_with('.') && key.starts_with(reason.prefix)))
      return std::string(reason.why);
  return {};
}

std::vector<FieldRow> field_rows(const Json& a, const Json& b) {
  std::vector<std::pair<std::string, std::string>> flat_a;
  std::vector<std::pair<std::string, std::string>> flat_b;
  flatten(a, "", flat_a);
  flatten(b, "", flat_b);
  std::map<std::string, std::string> by_key_b(flat_b.begin(), flat_b.end());
  std::map<std::string, bool> seen;
  std::vector<FieldRow> rows;
  for (const auto& [key, value] : flat_a) {
    auto other = by_key_b.find(key);
    rows.push_back(FieldRow{key, value,
                            other == by_key_b.end() ? std::string(kNone) : other->second,
                            why_it_matters(key)});
    seen[key] = true;
  }
  for (const auto& [key, value] : flat_b)
    if (!seen.contains(key))
      rows.push_back(FieldRow{key, std::string(kNone), value, why_it_matters(key)});
  return rows;
}

std::vector<FieldRow> drift(const Json& locked, const Json& live) {
  auto rows = field_rows(locked, live);
  // A lock written without the caches (from another node's facts) compares none of them.
  const bool caches = both_have_caches(locked, live);
  // The archive is compared only when verify was given one and the lock names one.
  const bool archive = both_have(locked, live, "cache_archive");
  // The upgrade gate's record is what the engine answered, not what the node is: `verify
  // --gate` asks the engine instead (cli/upgrade_gate).
  std::erase_if(rows, [caches, archive](const FieldRow& row) {
    return !row.differs() || (!caches && row.key.starts_with(kCaches)) ||
           (!archive && row.key.starts_with("cache_archive.")) || row.key.starts_with("gate.");
  });
  return rows;
}

std::vector<FieldRow> cache_notes(const Json& locked, const Json& live) {
  std::vector<FieldRow> rows;
  if (!both_have_caches(locked, live) || !locked["caches"].is_object()) return rows;
  const Json& now = live["caches"];
  for (const auto& [name, entry] : locked["caches"].items()) {
    if (!entry.is_object() || !now.contains(name) || !now[name].is_object()) continue;
    const auto text = [](const Json& cache) {
      const auto digest = cache.find("digest");
      const auto files = cache.find("files");
      if (digest == cache.end() || files == cache.end()) return std::string(kNone);
      return fmt::format("{} ({} files)",
                         digest->is_string() ? digest->get<std::string>().substr(0, 12)
                                             : std::string("too large to digest"),
                         files->dump());
    };
    FieldRow row{std::string(kCaches) + name + ".digest", text(entry), text(now[name]),
                 "informational: a JIT cache grows as the engine compiles"};
    if (row.differs()) rows.push_back(std::move(row));
  }
  return rows;
}

std::string drift_table(const std::vector<FieldRow>& rows) {
  std::vector<std::array<std::string, 4>> lines{{"FIELD", "LOCKED", "LIVE", "WHY IT MATTERS"}};
  for (const auto& row : rows) lines.push_back({row.key, row.a, row.b, row.why});
  return table(lines);
}

std::string side_by_side_table(const std::vector<FieldRow>& rows, const std::string& label_a,
                               const std::string& label_b) {
  std::vector<std::array<std::string, 4>> lines{{"  FIELD", label_a, label_b, ""}};
  for (const auto& row : rows)
    lines.push_back({(row.differs() ? "! " : "  ") + row.key, row.a, row.b,
                     row.differs() ? row.why : std::string()});
  return table(lines);
}

std::vector<KeyChange> profile_key_changes(const Json& a, const Json& b) {
  const auto merged = [](const Json& lock) -> std::optional<std::string> {
    if (!lock.is_object() || !lock.contains("profile") || !lock["profile"].is_object())
      return std::nullopt;
    const Json& profile = lock["profile"];
    const auto text = profile.find("merged");
    if (text == profile.end() || !text->is_string()) return std::nullopt;
    return text->get<std::string>();
  };
  const auto text_a = merged(a);
  const auto text_b = merged(b);
  if (!text_a || !text_b || *text_a == *text_b) return {};
  auto changes = diff_profile_texts(*text_a, "profile.merged", *text_b, "profile.merged");
  return changes ? std::move(*changes) : std::vector<KeyChange>{};
}

std::string key_changes_table(const std::vector<KeyChange>& changes) {
  std::vector<std::array<std::string, 4>> lines;
  for (const auto& change : changes) {
    std::string values;
    if (change.kind == KeyChangeKind::changed)
      values = *change.old_value + " -> " + *change.new_value;
    else
      values = change.old_value ? *change.old_value : *change.new_value;
    lines.push_back({"  " + std::string(key_change_name(change.kind)), change.key, values, ""});
  }
  return table(lines);
}

Json key_changes_json(const std::vector<KeyChange>& changes) {
  Json rows = Json::array();
  for (const auto& change : changes)
    rows.push_back({{"key", change.key},
                    {"change", key_change_name(change.kind)},
                    {"old", change.old_value ? Json(*change.old_value) : Json(nullptr)},
                    {"new", change.new_value ? Json(*change.new_value) : Json(nullptr)}});
  return rows;
}

}  // namespace gl
