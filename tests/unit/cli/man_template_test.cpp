// SPDX-License-Identifier: Apache-2.0
#include "cli/man_template.hpp"

#include <array>

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(ManTemplate, IncludesTextsAndInsertsValues) {
  const std::array<EmbeddedText, 2> texts{{
      {"page.roff", ".TH X 1 \"{{date}}\"\n.SH ONE\n{{one.roff}}\n.SH END\n"},
      {"one.roff", "Exits {{code}} on a stall.\n{{rows}}\n"},
  }};
  const ManValues values{{"date", "2026-01-01"}, {"code", "81"}, {"rows", ".TP\na\n.TP\nb\n"}};
  auto page = expand_man_text("page.roff", texts, values);
  ASSERT_TRUE(page) << page.error().message;
  // A placeholder on a line of its own is replaced by whole lines, no blank line left behind.
  EXPECT_EQ(*page,
            ".TH X 1 \"2026-01-01\"\n.SH ONE\nExits 81 on a stall.\n.TP\na\n.TP\nb\n.SH END\n");
}

TEST(ManTemplate, UnknownPlaceholderIsAnErrorAtItsPlace) {
  const std::array<EmbeddedText, 2> texts{{
      {"page.roff", ".SH A\n{{warm.roff}}\n"},
      {"warm.roff", ".SH WARM\nreads {{threads}} files\n"},
  }};
  auto page = expand_man_text("page.roff", texts, {});
  ASSERT_FALSE(page);
  EXPECT_EQ(page.error().message, "warm.roff:2:7: unknown placeholder {{threads}}");
}

TEST(ManTemplate, UnclosedPlaceholderAndSelfInclusionAreErrors) {
  const std::array<EmbeddedText, 2> texts{{
      {"open.roff", "text {{date\n"},
      {"loop.roff", "a\n{{loop.roff}}\n"},
  }};
  auto open = expand_man_text("open.roff", texts, {{"date", "x"}});
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().message, "open.roff:1:6: unclosed {{");
  auto loop = expand_man_text("loop.roff", texts, {});
  ASSERT_FALSE(loop);
  EXPECT_EQ(loop.error().message, "loop.roff:2:1: loop.roff includes itself");
  auto missing = expand_man_text("gone.roff", texts, {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "no manual text gone.roff");
}

TEST(ManTemplate, BracesThatAreNoPlaceholderStayAsTheyAre) {
  const std::array<EmbeddedText, 1> texts{{{"page.roff", "a {single} brace } and {{v}}}\n"}}};
  auto page = expand_man_text("page.roff", texts, {{"v", "1"}});
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(*page, "a {single} brace } and 1}\n");
}

}  // namespace
}  // namespace gl
