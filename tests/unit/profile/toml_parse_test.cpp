// SPDX-License-Identifier: Apache-2.0
#include "profile/toml_parse.hpp"

#include <pthread.h>

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

// Runs `body` on a thread with a 1 MiB stack, as a small service or worker thread would have.
void on_small_stack(std::function<void()> body) {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, 1 << 20);
  pthread_t thread;
  auto trampoline = [](void* argument) -> void* {
    (*static_cast<std::function<void()>*>(argument))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attributes, trampoline, &body), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
}

TEST(TomlGuard, RefusesTensOfThousandsOfDottedPartsWithoutCrashing) {
  std::string key = "a";
  for (int i = 0; i < 30000; ++i) key += ".a";
  for (const std::string& text : {key + " = 1\n", "[" + key + "]\n", "x = {" + key + " = 1}\n"}) {
    ASSERT_GT(text.size(), 60000u);
    on_small_stack([&] {
      auto parsed = parse_toml(text, "deep.toml");
      ASSERT_FALSE(parsed);
      // The error points at the first dot over the limit.
      size_t column = 0;
      for (size_t dots = 0; dots <= kMaxDotsPerLine; ++column)
        if (text[column] == '.') ++dots;
      EXPECT_EQ(parsed.error().message, "deep.toml:1:" + std::to_string(column) +
                                            ": line has more than 128 dotted key parts or numbers");
    });
  }
}

TEST(TomlGuard, RefusesHeadersThatCrashTheParser) {
  for (std::string_view text : {"[&", "[[[", "[ &", "[[&", "a = 1\n  [\t%]\n"}) {
    auto parsed = parse_toml(text, "h.toml");
    ASSERT_FALSE(parsed) << text;
    EXPECT_NE(parsed.error().message.find(": table header must start with a key name"),
              std::string::npos);
  }
}

TEST(TomlGuard, LeavesValidTomlAlone) {
  std::string_view text = R"(
title = "a [& b"   # [[[ in a comment
lines = """
[&
[[["""
nested = [[1, 2], [3]]
literal = '[&'
[ "quoted key" ]
x = 1
[[array.of.tables]]
y = 0.5
)";
  auto parsed = parse_toml(text, "ok.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ((*parsed)["quoted key"]["x"].value<int64_t>(), 1);
}

TEST(TomlGuard, RefusesOversizedInputBeforeParsing) {
  std::string text(kMaxProfileBytes + 1, '#');
  auto parsed = parse_toml(text, "big.toml");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "big.toml:1:1: file is 262145 bytes, over the limit of 262144 bytes");
}

}  // namespace
}  // namespace gl

namespace gl {
namespace {

// toml++ 3.3.0 reaches __builtin_unreachable on some non-ASCII characters outside strings.
TEST(TomlGuard, RefusesNonAsciiOutsideStringsAndComments) {
  auto parsed = parse_toml("naïve = 1\n", "u.toml");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, "u.toml:1:3: non-ASCII character outside a string or comment");
  EXPECT_TRUE(parse_toml("# naïve\nname = \"naïve 模型\"\nx = '¡'\n", "u.toml"));
}

}  // namespace
}  // namespace gl

namespace gl {
namespace {

// A fuzzer finding: a multi-line string may end in up to five quotes, two of them its content.
// Taking the first three as the end made the guard think a string opened there, and the text
// after it, outside any string for toml++, reached the non-ASCII whitespace check.
TEST(TomlGuard, AMultiLineStringEndsAfterItsWholeRunOfQuotes) {
  for (std::string_view text : {"a = \"\"\"x\"\"\"\" \u00e9\n", "a = \"\"\"x\"\"\"\"\" \u00e9\n",
                                "a = '''x'''' \u00e9\n"}) {
    auto parsed = parse_toml(text, "q.toml");
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().message.substr(0, 8), "q.toml:1") << parsed.error().message;
    EXPECT_NE(parsed.error().message.find("non-ASCII character outside a string or comment"),
              std::string::npos)
        << parsed.error().message;
  }
  auto parsed = parse_toml("a = \"\"\"say \"hi\"\"\"\"\"\nb = '''it''''\n", "q.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ((*parsed)["a"].value<std::string>(), "say \"hi\"\"");
  EXPECT_EQ((*parsed)["b"].value<std::string>(), "it'");
}

// A fuzzer finding: toml++ 3.3.0 scans a number or date on through a quote glued to it.
TEST(TomlGuard, RefusesAQuoteGluedToANumberOrDate) {
  for (std::string_view text :
       {"a = 1\"\u00e9\"\n", "a = 1.\"\u00e9\"\n", "a = [1\"\u00e9\"]\n", "a = {b = 1\"\u00e9\"}\n",
        "a = 1979-05-27'\u00e9'\n", "a = -\"\u00e9\"\n", "a = [\n  2,\n  0x\"\u00e9\"]\n"}) {
    auto parsed = parse_toml(text, "n.toml");
    ASSERT_FALSE(parsed) << text;
    EXPECT_NE(parsed.error().message.find(": a value must end before a string starts"),
              std::string::npos)
        << parsed.error().message;
  }
  auto parsed = parse_toml("a = 1\"x\"\n", "n.toml");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "n.toml:1:6: quote right after '1': a value must end before a string starts");
  // Keys may be quoted right after a dot, in every place a key goes.
  parsed = parse_toml(
      "1.\"\u00e9\" = 2\na.\"b\" = 3\n[t.\"k\"]\nx = {y.\"z\" = 1, w.\"v\" = [1, \"s\"]}\n"
      "u = [{p.\"q\" = 1}, {r = \"s\"}]\n",
      "n.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ((*parsed)["1"]["\u00e9"].value<int64_t>(), 2);
  EXPECT_EQ((*parsed)["t"]["k"]["x"]["w"]["v"][1].value<std::string>(), "s");
}

// Fuzzer findings: toml++ 3.3.0 reads a number or date on to the next terminator ('{' and quotes
// included), and classifies what follows a backslash with the table that crashes.
TEST(TomlGuard, RefusesWhatTomlPlusPlusWouldScanIntoNonAscii) {
  struct Case {
    std::string_view text;
    std::string_view error;
  };
  const Case cases[] = {
      {"a = 0x{.'\u00e9'\n",
       "n.toml:1:9: quote right after '.': a value must end before a string starts"},
      {"a = 1979-05-27 07:32{.'\u00e9'\n",
       "n.toml:1:23: quote right after '.': a value must end before a string starts"},
      {"a = [1, 2{\u00e9]\n", "n.toml:1:11: non-ASCII character outside a string or comment"},
      {"a = \"\"\"x\\\u00e9\"\"\"\n",
       "n.toml:1:10: unknown escape: a backslash before a non-ASCII character"},
      {"a = \"x\\\u00e9\"\n",
       "n.toml:1:8: unknown escape: a backslash before a non-ASCII character"},
      {"a = \"\"\"first \\\n  \u00e9lan\"\"\"\n",
       "n.toml:2:3: non-ASCII character right after a line-ending backslash (toml++ 3.3.0 cannot "
       "read it there; put an ASCII character first)"},
  };
  for (const auto& c : cases) {
    auto parsed = parse_toml(c.text, "n.toml");
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_EQ(parsed.error().message, c.error) << c.text;
  }
  // Valid neighbours still parse: dates with a space, numbers before terminators, a continued
  // line that starts with ASCII, escapes, non-ASCII after an escape's ASCII.
  auto parsed = parse_toml(
      "d = 1979-05-27 07:32:00\na = [1,2]\nb = {c = -3, e = +4.5}\nf = 1 # \u00e9\n"
      "g = \"\"\"first \\\n  x\u00e9lan\"\"\"\nh = \"tab\\t\u00e9 \\u00e9\"\n",
      "n.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ((*parsed)["g"].value<std::string>(), "first x\u00e9lan");
  EXPECT_EQ((*parsed)["b"]["c"].value<int64_t>(), -3);
}

// A fuzzer finding: toml++ 3.3.0 picks a parser from a first look at a number or date, and some
// malformed ones break that parser's assumptions (undefined behaviour in a release build).
TEST(TomlGuard, NumbersAndDatesFollowTomlsGrammar) {
  for (std::string_view bad : {"1979-05-27T::", "1979-05-27T07:3", "0x", "1__0", "01", "+0x1",
                               "1.e5", "1e", "07:32", "1979-05-27 07:32:00+", "--1", "1-2"}) {
    const std::string text = "a = " + std::string(bad) + "\n";
    auto parsed = parse_toml(text, "g.toml");
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().message,
              "g.toml:1:5: '" + std::string(bad) + "' is not a valid number, date or time");
  }
  auto parsed = parse_toml(
      "i = [0, -17, +99, 1_000, 0xDEAD_beef, 0o755, 0b1101]\n"
      "f = [3.14, -0.01, 5e+22, 1E06, -2E-2, 6.626e-34, 224_617.445_991, inf, -inf, +nan]\n"
      "d = [1979-05-27T07:32:00Z, 1979-05-27t00:32:00.999999-07:00, 1979-05-27 07:32:00,\n"
      "     1979-05-27, 07:32:00, 00:32:00.5]\n"
      "x = {n = 1, m = [2, {o = 3}]}\n",
      "g.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ((*parsed)["i"].as_array()->size(), 7u);
  EXPECT_EQ((*parsed)["f"].as_array()->size(), 10u);
  EXPECT_EQ((*parsed)["d"].as_array()->size(), 6u);
  EXPECT_EQ((*parsed)["x"]["m"][1]["o"].value<int64_t>(), 3);
}

TEST(TomlGuard, AcceptsAByteOrderMarkAtTheStartOnly) {
  auto parsed = parse_toml(
      "\xEF\xBB\xBF"
      "a = 1\n",
      "bom.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ((*parsed)["a"].value<int64_t>(), 1);
  parsed = parse_toml("a = 1\n\xEF\xBB\xBF", "bom.toml");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "bom.toml:2:1: non-ASCII character outside a string or comment");
}

// toml++ 3.3.0 asserts that an array element never starts with '}' (a fuzzer finding).
TEST(TomlGuard, RefusesAClosingBraceInsideAnArray) {
  for (std::string_view text : {"a = [}", "a = [1,}", "a = {b = [}]}", "a = [ # c\n}"}) {
    auto parsed = parse_toml(text, "b.toml");
    ASSERT_FALSE(parsed) << text;
    EXPECT_NE(parsed.error().message.find(": '}' inside an array closes nothing"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace gl
