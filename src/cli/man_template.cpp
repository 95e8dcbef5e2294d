// SPDX-License-Identifier: Apache-2.0
#include "cli/man_template.hpp"

#include <algorithm>
#include <vector>

#include "util/try.hpp"

namespace gl {
namespace {

constexpr std::string_view kOpen = "{{";
constexpr std::string_view kClose = "}}";

Location location_of(std::string_view name, std::string_view text, size_t at) {
  const std::string_view before = text.substr(0, at);
  const size_t line_start = before.rfind('\n');
  return Location{
      std::string(name), static_cast<unsigned>(std::ranges::count(before, '\n') + 1),
      static_cast<unsigned>(at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1)};
}

const EmbeddedText* find_text(std::span<const EmbeddedText> texts, std::string_view name) {
  auto found = std::ranges::find(texts, name, &EmbeddedText::name);
  return found == texts.end() ? nullptr : &*found;
}

Result<std::string> expand(const EmbeddedText& text, std::span<const EmbeddedText> texts,
                           const ManValues& values, std::vector<std::string_view>& open) {
  open.push_back(text.name);
  std::string out;
  size_t from = 0;
  for (size_t at; (at = text.text.find(kOpen, from)) != std::string_view::npos;) {
    out += text.text.substr(from, at - from);
    const size_t end = text.text.find(kClose, at + kOpen.size());
    if (end == std::string_view::npos)
      return fail_at(location_of(text.name, text.text, at), "unclosed {}", kOpen);
    const std::string_view key = text.text.substr(at + kOpen.size(), end - at - kOpen.size());
    std::string part;
    if (const EmbeddedText* nested = find_text(texts, key)) {
      if (std::ranges::find(open, key) != open.end())
        return fail_at(location_of(text.name, text.text, at), "{} includes itself", key);
      GL_TRY(part, expand(*nested, texts, values, open));
    } else if (auto value = values.find(key); value != values.end()) {
      part = value->second;
    } else {
      return fail_at(location_of(text.name, text.text, at), "unknown placeholder {}{}{}", kOpen,
                     key, kClose);
    }
    // A placeholder on a line of its own stands for lines: a part ending in a newline replaces
    // the placeholder's line, not one more.
    if (part.ends_with('\n') && text.text.substr(end + kClose.size(), 1) == "\n") part.pop_back();
    out += part;
    from = end + kClose.size();
  }
  out += text.text.substr(from);
  open.pop_back();
  return out;
}

}  // namespace

Result<std::string> expand_man_text(std::string_view name, std::span<const EmbeddedText> texts,
                                    const ManValues& values) {
  const EmbeddedText* text = find_text(texts, name);
  if (!text) return failf("no manual text {}", name);
  std::vector<std::string_view> open;
  return expand(*text, texts, values, open);
}

}  // namespace gl
