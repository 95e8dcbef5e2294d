// SPDX-License-Identifier: Apache-2.0
#include "profile/toml_print.hpp"

#include <gtest/gtest.h>

#include "profile/toml_parse.hpp"

namespace gl {
namespace {

toml::table parsed(std::string_view text) {
  auto table = parse_toml(text, "p.toml");
  EXPECT_TRUE(table) << table.error().message;
  return table ? *table : toml::table{};
}

TEST(TomlPrint, FloatsAsTheUserWroteThem) {
  const auto text = print_toml(parsed("[engine]\nmem_fraction = 0.85\n"));
  EXPECT_NE(text.find("mem_fraction = 0.85"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.8499"), std::string::npos) << text;
}

TEST(TomlPrint, EveryFloatReadsBackAsTheSameValue) {
  const auto table = parsed(
      "a = 0.1\nb = 2.0\nc = 1e-3\nd = -0.8512345\ne = [0.3, 1, \"s\"]\n[t.u]\nf = 1.5e300\n");
  const auto text = print_toml(table);
  EXPECT_NE(text.find("a = 0.1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("b = 2.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("d = -0.8512345\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[ 0.3, 1, 's' ]"), std::string::npos) << text;
  EXPECT_EQ(parsed(text), table) << text;
}

TEST(TomlPrint, StringsAndOtherValuesUntouched) {
  const auto table = parsed("s = \"gl-float-0\"\nn = 3\nx = \"0.85\"\n");
  const auto text = print_toml(table);
  EXPECT_EQ(parsed(text), table) << text;
}

}  // namespace
}  // namespace gl
