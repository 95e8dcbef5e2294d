// SPDX-License-Identifier: Apache-2.0
#include "util/terminal_text.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(TerminalText, PlainTextAndValidUtf8AreKept) {
  EXPECT_EQ(terminal_text("model-00001-of-00002.safetensors"), "model-00001-of-00002.safetensors");
  EXPECT_EQ(terminal_text("na\xc3\xafve \xe6\xa8\xa1\xe5\x9e\x8b \xf0\x9f\x99\x82 C:\\x"),
            "na\xc3\xafve \xe6\xa8\xa1\xe5\x9e\x8b \xf0\x9f\x99\x82 C:\\x");
  EXPECT_EQ(terminal_text(""), "");
}

TEST(TerminalText, EscapeSequencesAreShownNotRun) {
  // CSI clearing the screen, OSC 52 setting the clipboard, OSC 8 hiding a link, a bare BEL.
  EXPECT_EQ(terminal_text("a\x1b[2J\x1b[Hb"), "a\\x1b[2J\\x1b[Hb");
  EXPECT_EQ(terminal_text("\x1b]52;c;Y3VybCBldmlsfHNo\x07"), "\\x1b]52;c;Y3VybCBldmlsfHNo\\x07");
  EXPECT_EQ(terminal_text("\x1b]8;;http://x\x1b\\ok"), "\\x1b]8;;http://x\\x1b\\ok");
  EXPECT_EQ(terminal_text("del\x7f"), "del\\x7f");
}

TEST(TerminalText, LinesCannotBeForged) {
  // A file name or engine line holding a newline or carriage return stays one line.
  EXPECT_EQ(terminal_text("x.safetensors\nerror: disk on fire"),
            "x.safetensors\\x0aerror: disk on fire");
  EXPECT_EQ(terminal_text("ok\rwarning"), "ok\\x0dwarning");
  EXPECT_EQ(terminal_text("a\tb"), "a\\x09b");
}

TEST(TerminalText, C1ControlsAndBidiOverridesAreNamed) {
  EXPECT_EQ(terminal_text("\xc2\x9b"
                          "2J"),
            "\\u009b2J");  // CSI as one C1 character
  EXPECT_EQ(terminal_text("\xc2\x9d"
                          "52;c;x\xc2\x9c"),
            "\\u009d52;c;x\\u009c");
  EXPECT_EQ(terminal_text("evil\xe2\x80\xae"
                          "fdp.bin"),
            "evil\\u202efdp.bin");
  EXPECT_EQ(terminal_text("\xe2\x81\xa6x\xe2\x81\xa9\xe2\x80\x8f\xd8\x9c"),
            "\\u2066x\\u2069\\u200f\\u061c");
}

TEST(TerminalText, InvalidUtf8IsShownByteByByte) {
  EXPECT_EQ(terminal_text("\x9b"
                          "2J"),
            "\\x9b2J");                                                  // a raw C1 byte
  EXPECT_EQ(terminal_text("\xff\xfe"), "\\xff\\xfe");                    // never UTF-8
  EXPECT_EQ(terminal_text("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(terminal_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(terminal_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(terminal_text("cut \xe6\xa8"), "cut \\xe6\\xa8");            // a sequence cut short
}

}  // namespace
}  // namespace gl
