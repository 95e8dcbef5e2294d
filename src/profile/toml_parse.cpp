// SPDX-License-Identifier: Apache-2.0
#include "profile/toml_parse.hpp"

#include "util/scan.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

bool is_bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// Characters of numbers, booleans, dates and times: 1_000, -0x1f, 1e+5, inf, 1979-05-27T07:32Z.
bool is_value_token_char(char c) {
  return is_bare_key_char(c) || c == '+' || c == '.' || c == ':';
}

bool starts_number_or_date(char c) {
  return (c >= '0' && c <= '9') || c == '+' || c == '-';
}

// [0-9]{4}-[0-9]{2}-[0-9]{2}
bool local_date(Scan& scan) {
  return scan.digits(4, 4) && scan.literal("-") && scan.digits(2, 2) && scan.literal("-") &&
         scan.digits(2, 2);
}

bool is_local_date(std::string_view token) {
  Scan scan(token);
  return local_date(scan) && scan.done();
}

// [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?
bool local_time(Scan& scan) {
  if (!scan.digits(2, 2) || !scan.literal(":") || !scan.digits(2, 2) || !scan.literal(":") ||
      !scan.digits(2, 2))
    return false;
  return !scan.literal(".") || scan.digits(1);
}

// D(_?D)*: digits, each underscore between two of them.
template <class Digit>
bool digits_with_underscores(Scan& scan, Digit digit) {
  if (!scan.one(digit)) return false;
  for (;;) {
    if (scan.one(digit)) continue;
    if (scan.rest().size() >= 2 && scan.rest()[0] == '_' && digit(scan.rest()[1])) {
      scan.literal("_");
      continue;
    }
    return true;
  }
}

// [+-]?(0|[1-9](_?[0-9])*) then, for a float, (\.[0-9](_?[0-9])*)? ([eE][+-]?[0-9](_?[0-9])*)?
bool decimal_number(Scan& scan) {
  scan.one_of("+-");
  if (!scan.literal("0") && !(is_digit(scan.peek()) && digits_with_underscores(scan, is_digit)))
    return false;
  if (scan.literal(".") && !digits_with_underscores(scan, is_digit)) return false;
  if (scan.one_of("eE")) {
    scan.one_of("+-");
    if (!digits_with_underscores(scan, is_digit)) return false;
  }
  return true;
}

// TOML 1.0's integer, float, date, time and date-time (with a 'T', 't' or space) grammar, as one
// pass per alternative over the token: no regex (std::regex recurses per character).
bool is_number_or_date(std::string_view token) {
  auto whole = [&](auto match) {
    Scan scan(token);
    return match(scan) && scan.done();
  };
  auto radix = [&](std::string_view prefix, auto digit) {
    return whole(
        [&](Scan& scan) { return scan.literal(prefix) && digits_with_underscores(scan, digit); });
  };
  if (whole(decimal_number)) return true;
  if (radix("0x", is_hex_digit) || radix("0o", [](char c) { return c >= '0' && c <= '7'; }) ||
      radix("0b", [](char c) { return c == '0' || c == '1'; }))
    return true;
  if (whole([](Scan& scan) {
        scan.one_of("+-");
        return scan.literal("inf") || scan.literal("nan");
      }))
    return true;
  if (whole(local_time)) return true;
  return whole([](Scan& scan) {
    if (!local_date(scan)) return false;
    if (scan.done()) return true;
    if (!scan.one_of("Tt ") || !local_time(scan)) return false;
    if (scan.one_of("Zz")) return true;
    if (!scan.one_of("+-")) return true;
    return scan.digits(2, 2) && scan.literal(":") && scan.digits(2, 2);
  });
}

// Where toml++ ends a number or date (its is_value_terminator, ASCII part).
bool is_value_terminator(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == ']' || c == '}' ||
         c == '#';
}

// A lexer just deep enough to know which bytes are inside strings and comments, where lines
// start, which brackets are open and where keys or values go. It refuses only what toml++ 3.3.0
// cannot be trusted with; toml++ decides everything else.
class Guard {
 public:
  Guard(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Result<void> run() {
    // Editors on some systems start UTF-8 files with a byte-order mark; toml++ skips it.
    if (text_.starts_with("\xEF\xBB\xBF")) i_ = 3;
    while (i_ < text_.size()) {
      char c = text_[i_];
      if (c == '\n') {
        newline();
        continue;
      }
      if (c == '#') {
        skip_comment();
        continue;
      }
      // A number or date: toml++ 3.3.0 reads it up to the next value terminator, whatever lies
      // between ('{', '[', quotes), so none of that opens anything.
      if (in_value_ && starts_number_or_date(c) &&
          (i_ == 0 || !is_value_token_char(text_[i_ - 1]))) {
        GL_TRY_VOID(skip_number_or_date());
        continue;
      }
      if (c == '"' || c == '\'') {
        // toml++ 3.3.0 opens no string at a quote glued to a number or date (`1"x"`): it scans
        // on through the quote to the next terminator, and non-ASCII text there reaches its
        // __builtin_unreachable. No valid value has a quote there.
        if (in_value_ && i_ > 0 && is_value_token_char(text_[i_ - 1])) return glued_quote();
        GL_TRY_VOID(skip_string(c));
        continue;
      }
      const bool header = c == '[' && open_.empty() && at_line_start_;
      if (header) {
        GL_TRY_VOID(check_header());
      }
      // Keys come at a line's start, in headers, after '{' and after ',' in an inline table;
      // values after '=', '[' (an array) and ',' in an array.
      if (c == '=') in_value_ = true;
      if (c == '[') in_value_ = !header;
      if (c == '{') in_value_ = false;
      if (c == ',') in_value_ = open_.empty() || open_.back() == '[';
      if (c == '[' || c == '{') open_.push_back(c);
      // toml++ 3.3.0 asserts (or assumes) that an array element never starts with '}'.
      if (c == '}' && !open_.empty() && open_.back() == '[')
        return fail_here("'}}' inside an array closes nothing");
      if ((c == ']' || c == '}') && !open_.empty()) open_.pop_back();
      GL_TRY_VOID(check_bare_byte(c));
      if (c != ' ' && c != '\t' && c != '\r') at_line_start_ = false;
      advance();
    }
    return {};
  }

 private:
  template <class... Args>
  std::unexpected<Error> fail_here(fmt::format_string<Args...> format, Args&&... args) {
    return fail_at(Location{path_, line_, column_}, format, std::forward<Args>(args)...);
  }

  // A byte outside strings and comments. TOML allows non-ASCII only in those, and toml++ 3.3.0
  // reaches __builtin_unreachable classifying some of it (U+00A1..U+049F, U+FCD6..U+FEFE).
  Result<void> check_bare_byte(char c) {
    if (static_cast<unsigned char>(c) >= 0x80)
      return fail_here("non-ASCII character outside a string or comment");
    if (c == '.' && ++dots_on_line_ > kMaxDotsPerLine)
      return fail_here("line has more than {} dotted key parts or numbers", kMaxDotsPerLine);
    return {};
  }

  // A quote right after a value's last character: toml++ 3.3.0 opens no string there.
  std::unexpected<Error> glued_quote() {
    return fail_here("quote right after '{}': a value must end before a string starts",
                     text_[i_ - 1]);
  }

  void advance() {
    ++i_;
    ++column_;
  }

  void newline() {
    ++i_;
    ++line_;
    column_ = 1;
    at_line_start_ = true;
    dots_on_line_ = 0;
    if (open_.empty()) in_value_ = false;  // multi-line arrays and tables go on
  }

  // The whole token is checked against TOML's grammar for numbers, dates and times: toml++
  // 3.3.0 picks a parser from a first look at it, and some malformed ones (`1979-05-27T::`) then
  // break that parser's assumptions (undefined behaviour in a release build).
  Result<void> skip_number_or_date() {
    at_line_start_ = false;
    const size_t start = i_;
    const unsigned start_column = column_;
    while (i_ < text_.size()) {
      const char c = text_[i_];
      // "1979-05-27 07:32:00": toml++ reads a date, a space and a time as one date-time.
      if (c == ' ' && is_local_date(text_.substr(start, i_ - start)) && i_ + 1 < text_.size() &&
          text_[i_ + 1] >= '0' && text_[i_ + 1] <= '9') {
        advance();
        continue;
      }
      if (is_value_terminator(c)) break;
      if ((c == '"' || c == '\'') && i_ > 0) return glued_quote();
      GL_TRY_VOID(check_bare_byte(c));
      advance();
    }
    const std::string_view token = text_.substr(start, i_ - start);
    if (!is_number_or_date(token))
      return fail_at(Location{path_, line_, start_column},
                     "'{}' is not a valid number, date or time", token);
    return {};
  }

  // After a backslash in a basic string: toml++ 3.3.0 classifies the next character, and in a
  // multi-line string the first one after a line-ending backslash's run of whitespace, with a
  // table that reaches __builtin_unreachable on some non-ASCII characters. Neither is ever needed:
  // escapes are ASCII, and the continued text may start with any ASCII character.
  Result<void> check_escape(bool multi_line) {
    size_t j = i_ + 1;
    unsigned line = line_;
    unsigned column = column_ + 1;
    if (multi_line)
      while (j < text_.size() &&
             (text_[j] == ' ' || text_[j] == '\t' || text_[j] == '\r' || text_[j] == '\n')) {
        column = text_[j] == '\n' ? 1 : column + 1;
        if (text_[j] == '\n') ++line;
        ++j;
      }
    if (j < text_.size() && static_cast<unsigned char>(text_[j]) >= 0x80) {
      if (j == i_ + 1)
        return fail_at(Location{path_, line, column},
                       "unknown escape: a backslash before a non-ASCII character");
      return fail_at(Location{path_, line, column},
                     "non-ASCII character right after a line-ending backslash (toml++ 3.3.0 "
                     "cannot read it there; put an ASCII character first)");
    }
    return {};
  }

  void skip_comment() {
    while (i_ < text_.size() && text_[i_] != '\n') advance();
  }

  Result<void> skip_string(char quote) {
    bool multi_line = text_.substr(i_, 3) == std::string(3, quote);
    size_t open = multi_line ? 3 : 1;
    for (size_t k = 0; k < open; ++k) advance();
    at_line_start_ = false;
    while (i_ < text_.size()) {
      char c = text_[i_];
      if (c == '\\' && quote == '"') {
        GL_TRY_VOID(check_escape(multi_line));
        advance();
        if (i_ < text_.size() && text_[i_] != '\n') advance();
        continue;
      }
      if (c == '\n') {
        if (!multi_line) return {};  // toml++ reports the unterminated string itself
        newline();
        at_line_start_ = false;
        continue;
      }
      if (c == quote && !multi_line) {
        advance();
        return {};
      }
      if (c == quote && text_.substr(i_, 3) == std::string(3, quote)) {
        // Up to two quotes may sit just inside the closing delimiter (`x"`): the string
        // ends after the whole run of up to five.
        for (size_t k = 0; k < 5 && i_ < text_.size() && text_[i_] == quote; ++k) advance();
        return {};
      }
      advance();
    }
    return {};
  }

  // A table header must open with a key: toml++ asserts (or, built with NDEBUG, assumes) it does.
  Result<void> check_header() {
    size_t j = i_ + 1;
    unsigned column = column_ + 1;
    if (j < text_.size() && text_[j] == '[') {
      ++j;
      ++column;
    }
    while (j < text_.size() && (text_[j] == ' ' || text_[j] == '\t')) {
      ++j;
      ++column;
    }
    if (j >= text_.size() || !(is_bare_key_char(text_[j]) || text_[j] == '"' || text_[j] == '\''))
      return fail_at(Location{path_, line_, column}, "table header must start with a key name");
    return {};
  }

  std::string_view text_;
  const std::string& path_;
  size_t i_ = 0;
  unsigned line_ = 1;
  unsigned column_ = 1;
  std::string open_;  // brackets and braces not yet closed, innermost last
  size_t dots_on_line_ = 0;
  bool at_line_start_ = true;
  bool in_value_ = false;  // a value may come here, not a key
};

}  // namespace

Result<void> guard_toml_text(std::string_view text, const std::string& path) {
  if (text.size() > kMaxProfileBytes)
    return failf("{}:1:1: file is {} bytes, over the limit of {} bytes", path, text.size(),
                 kMaxProfileBytes);
  return Guard(text, path).run();
}

Result<toml::table> parse_toml(std::string_view text, const std::string& path) {
  GL_TRY_VOID(guard_toml_text(text, path));
  try {
    return toml::parse(text, std::string_view{path});
  } catch (const toml::parse_error& error) {
    const auto& begin = error.source().begin;
    std::string description{error.description()};
    return fail_at(Location{path, begin.line, begin.column}, "{}", description);
  }
}

std::string_view toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

Location location_of(const toml::node& node, const Location& fallback) {
  const auto& source = node.source();
  if (!source.path || source.begin.line == 0) return fallback;
  return Location{*source.path, source.begin.line, source.begin.column};
}

}  // namespace gl
