// SPDX-License-Identifier: Apache-2.0
#include "profile/merge.hpp"

#include <string>
#include <vector>

namespace gl {

void merge_into(toml::table& base, toml::table&& overlay) {
  std::vector<toml::key> keys;
  for (auto&& [key, node] : overlay) keys.push_back(key);
  for (const auto& key : keys) {
    toml::node* incoming = overlay.get(key.str());
    toml::table* existing = base.get_as<toml::table>(key.str());
    if (incoming->is_table() && existing) {
      merge_into(*existing, std::move(*incoming->as_table()));
      continue;
    }
    incoming->visit([&](auto&& value) { base.insert_or_assign(key, std::move(value)); });
  }
}

}  // namespace gl
