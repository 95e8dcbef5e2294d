#include "unit/escape.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(Escape, QuotesEveryExecWord) {
  EXPECT_EQ(quote_exec_word("plain"), "\"plain\"");
  EXPECT_EQ(quote_exec_word("two words"), "\"two words\"");
  EXPECT_EQ(quote_exec_word(""), "\"\"");
}

TEST(Escape, EscapesSpecifiersVariablesQuotesAndBackslashes) {
  EXPECT_EQ(quote_exec_word("50%"), "\"50%%\"");
  EXPECT_EQ(quote_exec_word("$HOME"), "\"$$HOME\"");
  EXPECT_EQ(quote_exec_word("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(quote_exec_word("C:\\path"), "\"C:\\\\path\"");
  // A quoted ";" is an argument; only a bare one separates commands.
  EXPECT_EQ(quote_exec_word(";"), "\";\"");
  EXPECT_EQ(quote_exec_word("a'b"), "\"a'b\"");
}

TEST(Escape, CEscapesControlBytesAndKeepsUtf8) {
  EXPECT_EQ(quote_exec_word("a\nb\tc"), "\"a\\nb\\tc\"");
  EXPECT_EQ(quote_exec_word(std::string("\x01", 1)), "\"\\x01\"");
  EXPECT_EQ(quote_exec_word("naïve 模型"), "\"naïve 模型\"");
  EXPECT_EQ(quote_exec_word("\xff"), "\"\\xff\"");  // not UTF-8: spelled as the byte
}

TEST(Escape, EnvironmentKeepsDollarButEscapesTheRest) {
  EXPECT_EQ(quote_environment("X", "$HOME 100% \"q\""), "\"X=$HOME 100%% \\\"q\\\"\"");
}

TEST(Escape, CommandLineJoinsQuotedWords) {
  EXPECT_EQ(exec_command_line({"/bin/echo", "a b", "$c"}), "\"/bin/echo\" \"a b\" \"$$c\"");
}

}  // namespace
}  // namespace gl
