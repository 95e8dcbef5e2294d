// SPDX-License-Identifier: Apache-2.0
#pragma once
// What differs between two locks (or two nodes' facts), field by field, with why each field
// matters to a running engine. Pure; the tables come back as text for the CLI to print.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/key_diff.hpp"

namespace gl {

struct FieldRow {
  std::string key;  // "node.toolkit.version"
  std::string a;    // "(none)" when absent
  std::string b;
  std::string why;

  bool differs() const { return a != b; }
};

// Every recorded field of both documents, in `a`'s order then `b`'s extras. Informational keys
// (the lock format, the profile's file and merged text) are left out: their hashes stand in.
std::vector<FieldRow> field_rows(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b);

// The rows that differ between a lock and the live node's lock. The caches' rows (their
// fingerprints) count only where both record caches.
std::vector<FieldRow> drift(const nlohmann::ordered_json& locked,
                            const nlohmann::ordered_json& live);

// Where both documents record caches (a lock taken on its node does), how each cache's content
// changed: "caches.NAME.digest" rows, digest prefix and file count. Not drift: a JIT cache
// legitimately grows; a changed fingerprint is (drift() has those rows).
std::vector<FieldRow> cache_notes(const nlohmann::ordered_json& locked,
                                  const nlohmann::ordered_json& live);

// Why a change in this field matters ("" for none known).
std::string why_it_matters(std::string_view key);

// FIELD / LOCKED / LIVE / WHY IT MATTERS, columns padded; one line per row, trailing newline.
std::string drift_table(const std::vector<FieldRow>& rows);

// Every row with a marker on those that differ: "! " differs, "  " the same.
std::string side_by_side_table(const std::vector<FieldRow>& rows, const std::string& label_a,
                               const std::string& label_b);

// The merged profile's keys that differ between two locks, read from each one's
// "profile.merged" text (parse_lock has parsed it); none where either holds no text.
std::vector<KeyChange> profile_key_changes(const nlohmann::ordered_json& a,
                                           const nlohmann::ordered_json& b);

// One line per key, columns padded: "  changed  engine.max_requests  64 -> 128".
std::string key_changes_table(const std::vector<KeyChange>& changes);

// [{"key", "change", "old", "new"}], each value its TOML text or null.
nlohmann::ordered_json key_changes_json(const std::vector<KeyChange>& changes);

}  // namespace gl
