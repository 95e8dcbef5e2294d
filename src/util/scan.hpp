// SPDX-License-Identifier: Apache-2.0
#pragma once
// A cursor for matchers written as loops. Every step consumes or stops; nothing recurses and
// nothing backtracks, so text of any length costs linear time and constant stack (unlike
// libstdc++'s std::regex, which recurses once per character and overflows the stack on a long
// word).

#include <cstddef>
#include <string_view>

namespace gl {

inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool is_alnum(char c) {
  return is_digit(c) || is_alpha(c);
}
inline bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

class Scan {
 public:
  explicit Scan(std::string_view text) : text_(text) {}

  bool done() const { return at_ == text_.size(); }
  char peek() const { return done() ? '\0' : text_[at_]; }
  size_t position() const { return at_; }
  std::string_view rest() const { return text_.substr(at_); }

  // Consumes `literal` when the text continues with it.
  bool literal(std::string_view literal) {
    if (!rest().starts_with(literal)) return false;
    at_ += literal.size();
    return true;
  }

  // Consumes one character that satisfies `accept`.
  template <class Accept>
  bool one(Accept accept) {
    if (done() || !accept(text_[at_])) return false;
    ++at_;
    return true;
  }

  bool one_of(std::string_view set) {
    return one([&](char c) { return set.find(c) != std::string_view::npos; });
  }

  // Consumes as many characters satisfying `accept` as there are, up to `most`; true when that
  // was at least `least`. Greedy, which matches a regex's `{least,most}` wherever the next
  // character cannot also satisfy `accept` (true of every grammar here).
  template <class Accept>
  bool run(Accept accept, size_t least = 1, size_t most = std::string_view::npos) {
    size_t count = 0;
    while (count < most && one(accept)) ++count;
    return count >= least;
  }

  bool digits(size_t least, size_t most = std::string_view::npos) {
    return run(is_digit, least, most);
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace gl
