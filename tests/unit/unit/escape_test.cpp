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

// Issue 28: a newline in text systemd copies into a unit line started a line of its own
// ("[Service]", "ExecStopPost=+CMD"). One-line text shows it as "\x0a" instead.
TEST(Escape, OneLineTextCannotStartALineOfItsOwn) {
  EXPECT_EQ(one_line("x\n[Service]\nExecStopPost=+/bin/touch /pwned"),
            "x\\x0a[Service]\\x0aExecStopPost=+/bin/touch /pwned");
  EXPECT_EQ(one_line("a\rb\tc\x7f"), "a\\x0db\\x09c\\x7f");
  EXPECT_EQ(one_line("100% \\"), "100% \\ ");  // specifiers stay: systemd escapes them itself
  EXPECT_EQ(escape_specifiers("gpulaunch k: a\nExecStartPre=+/bin/sh"),
            "gpulaunch k: a\\x0aExecStartPre=+/bin/sh");
  for (std::string_view text : {"a\nb", "\n", "x\n\\", "\r\n["}) {
    EXPECT_EQ(one_line(text).find_first_of("\n\r"), std::string::npos) << text;
    EXPECT_EQ(escape_specifiers(text).find_first_of("\n\r"), std::string::npos) << text;
  }
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
