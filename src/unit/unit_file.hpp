// SPDX-License-Identifier: Apache-2.0
#pragma once
// A unit file as data: comment header, sections, ordered Key=Value entries. Values are stored
// already escaped for their key; to_text() only lays them out.

#include <string>
#include <string_view>
#include <vector>

namespace gl {

struct UnitEntry {
  std::string key;
  std::string value;
};

struct UnitSection {
  std::string name;
  std::vector<UnitEntry> entries;
};

class UnitFile {
 public:
  std::vector<std::string> header;  // comment lines, without "# "

  UnitSection& section(std::string_view name);
  void add(std::string_view section_name, std::string key, std::string value);
  // Values of `key` in `section_name`, in order (Environment= and DeviceAllow= repeat).
  std::vector<std::string> values(std::string_view section_name, std::string_view key) const;
  const std::vector<UnitSection>& sections() const { return sections_; }

  std::string to_text() const;

 private:
  std::vector<UnitSection> sections_;
};

}  // namespace gl
