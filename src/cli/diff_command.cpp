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

int diff(const std::string& path_a, const std::string& path_b) {
  auto a = load_document(path_a);
  if (!a) return report(a.error(), 2);
  auto b = load_document(path_b);
  if (!b) return report(b.error(), 2);
  if (a->lock != b->lock)
    return report(Error{fmt::format("Failed to compare '{}' with '{}': one is a lock, the other "
                                    "a facts file; compare two of a kind",
                                    path_a, path_b)},
                  2);
  auto rows = field_rows(a->comparable, b->comparable);
  const auto differing =
      std::count_if(rows.begin(), rows.end(), [](const FieldRow& row) { return row.differs(); });
  fmt::print("{}", side_by_side_table(rows, path_a, path_b));
  fmt::print("\n{}\n", differing ? fmt::format("{} field(s) differ (marked !)", differing)
                                 : std::string("identical"));
  return differing ? 1 : 0;
}

}  // namespace

void add_diff_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "diff",
      "Compare two lockfiles, or two nodes' facts files, side by side (exit 1 if they differ)");
  static std::string a;
  static std::string b;
  command->add_option("a", a, "Lockfile or `gpulaunch facts --json` output")->required();
  command->add_option("b", b, "Lockfile or `gpulaunch facts --json` output")->required();
  command->callback([&context] { context.exit_code = diff(a, b); });
}

}  // namespace gl
