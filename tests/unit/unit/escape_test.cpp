// SPDX-License-Identifier: Apache-2.0
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

// systemd joins a line ending in '\' to the next: a trailing backslash gets a space after it,
// which systemd's parser strips again (checked against systemd 252: Description= reads back
// "C:\models\").
TEST(Escape, TrailingBackslashCannotSwallowTheNextLine) {
  EXPECT_EQ(escape_specifiers("C:\\models\\"), "C:\\models\\ ");
  EXPECT_EQ(escape_specifiers("a\\b"), "a\\b");
  EXPECT_EQ(escape_specifiers("100%"), "100%%");
}

// Path lists expand specifiers, not variables: '$' stays one '$' (an ExecStart= word doubles it).
TEST(Escape, PathWordsKeepDollar) {
  EXPECT_EQ(quote_path_word("/data/cache$HOME/100%"), "\"/data/cache$HOME/100%%\"");
  EXPECT_EQ(quote_exec_word("/data/cache$HOME"), "\"/data/cache$$HOME\"");
  EXPECT_EQ(quote_path_word("/a b/\"q\"\\"), "\"/a b/\\\"q\\\"\\\\\"");
}

TEST(Escape, CredentialPathUsesTheCredentialsDirectorySpecifier) {
  EXPECT_EQ(credential_path_environment("HF_TOKEN_PATH", "HF_TOKEN"),
            "\"HF_TOKEN_PATH=%d/HF_TOKEN\"");
}

}  // namespace
}  // namespace gl
