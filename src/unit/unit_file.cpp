// SPDX-License-Identifier: Apache-2.0
#include "unit/unit_file.hpp"

namespace gl {

UnitSection& UnitFile::section(std::string_view name) {
  for (auto& existing : sections_)
    if (existing.name == name) return existing;
  sections_.push_back({std::string(name), {}});
  return sections_.back();
}

void UnitFile::add(std::string_view section_name, std::string key, std::string value) {
  section(section_name).entries.push_back({std::move(key), std::move(value)});
}

std::vector<std::string> UnitFile::values(std::string_view section_name,
                                          std::string_view key) const {
  std::vector<std::string> found;
  for (const auto& section : sections_)
    if (section.name == section_name)
      for (const auto& entry : section.entries)
        if (entry.key == key) found.push_back(entry.value);
  return found;
}

namespace {

// A comment line must stay one line whatever a file name holds.
std::string comment(std::string_view line) {
  std::string text = "#";
  if (!line.empty()) text += ' ';
  for (char c : line) text += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return text + "\n";
}

}  // namespace

std::string UnitFile::to_text() const {
  std::string text;
  for (const auto& line : header) text += comment(line);
  for (const auto& section : sections_) {
    if (!text.empty()) text += "\n";
    text += "[" + section.name + "]\n";
    for (const auto& entry : section.entries) text += entry.key + "=" + entry.value + "\n";
  }
  return text;
}

}  // namespace gl
