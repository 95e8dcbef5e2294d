// SPDX-License-Identifier: Apache-2.0
// `gpulaunch diff A B`: two locks, or two nodes' facts files, side by side.

#include <algorithm>

#include <fmt/core.h>

#include "cli/context.hpp"
#include "lock/drift.hpp"
#include "lock/lockfile.hpp"
#include "util/json_file.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

using Json = nlohmann::ordered_json;

struct Document {
  Json comparable;
  bool lock = false;
};

Result<Document> load_document(const std::string& path) {
  GL_TRY(auto text, read_json_text(path));
  GL_TRY(auto document, parse_bounded_json<Json>(text, fmt::format("'{}'", path)));
  if (is_lock(document)) {
    GL_TRY(auto lock, parse_lock(text, path));
    return Document{std::move(lock), true};
  }
  GL_TRY(auto facts, parse_facts(text, path));
  Json node = Json::object();
  node["node"] = facts_section(facts);
  return Document{std::move(node), false};
}

struct DiffOptions {
  std::string a;
  std::string b;
  bool all = false;
  bool json = false;
};

void print_json(const DiffOptions& options, bool lock, const std::vector<FieldRow>& rows,
                const std::vector<KeyChange>& keys, bool identical) {
  Json fields = Json::array();
  for (const auto& row : rows)
    fields.push_back({{"field", row.key},
                      {"a", row.a},
                      {"b", row.b},
                      {"differs", row.differs()},
                      {"why", row.why}});
  const Json answer{{"a", options.a},
                    {"b", options.b},
                    {"kind", lock ? "lock" : "facts"},
                    {"identical", identical},
                    {"fields", std::move(fields)},
                    {"profile_keys", key_changes_json(keys)}};
  fmt::print("{}\n", answer.dump(2));
}

int diff(const DiffOptions& options) {
  auto a = load_document(options.a);
  if (!a) return report(a.error(), 2);
  auto b = load_document(options.b);
  if (!b) return report(b.error(), 2);
  if (a->lock != b->lock)
    return report(Error{fmt::format("Failed to compare '{}' with '{}': one is a lock, the other "
                                    "a facts file; compare two of a kind",
                                    options.a, options.b)},
                  2);
  auto rows = field_rows(a->comparable, b->comparable);
  const auto differing =
      std::count_if(rows.begin(), rows.end(), [](const FieldRow& row) { return row.differs(); });
  // The profile's keys, where both locks hold its text: what the profile hash's row stands for.
  const auto keys = profile_key_changes(a->comparable, b->comparable);
  if (!options.all) std::erase_if(rows, [](const FieldRow& row) { return !row.differs(); });
  if (options.json) {
    print_json(options, a->lock, rows, keys, differing == 0);
  } else {
    if (!rows.empty()) fmt::print("{}", side_by_side_table(rows, options.a, options.b));
    if (!keys.empty())
      fmt::print("\nprofile keys that differ ({} -> {}):\n{}", options.a, options.b,
                 key_changes_table(keys));
    fmt::print("{}{}\n", rows.empty() ? "" : "\n",
               differing ? fmt::format("{} field(s) differ (marked !){}", differing,
                                       options.all ? "" : "; --all shows every field")
                         : std::string("identical"));
  }
  return differing ? 1 : 0;
}

}  // namespace

void add_diff_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "diff",
      "Compare two lockfiles, or two nodes' facts files, side by side (exit 1 if they differ)");
  static DiffOptions options;
  command->add_option("a", options.a, "Lockfile or `gpulaunch facts --json` output")->required();
  command->add_option("b", options.b, "Lockfile or `gpulaunch facts --json` output")->required();
  command->add_flag("--all", options.all, "Show every field, not only those that differ");
  command->add_flag("--json", options.json,
                    "Machine-readable output: the differing fields (every field with --all) and "
                    "the profile keys that differ");
  command->callback([&context] { context.exit_code = diff(options); });
}

}  // namespace gl
