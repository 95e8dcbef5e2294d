// SPDX-License-Identifier: Apache-2.0
// Where the engine's output is cut into journal lines, over bytes in memory: newlines and
// carriage returns end a line, a tqdm update is a line as soon as it arrives, an endless line
// is cut into pieces between UTF-8 characters, and tqdm's padding is not passed on.

#include "run/output_lines.hpp"

#include <string>

#include <gtest/gtest.h>

namespace gl {
namespace {

// Where LineEnd ends the first line of `bytes`; npos while the line goes on.
size_t line_end(const std::string& bytes, bool after_carriage_return = false) {
  auto [end, complete] = LineEnd{after_carriage_return}(bytes.begin(), bytes.end());
  return complete ? static_cast<size_t>(end - bytes.begin()) : std::string::npos;
}

TEST(OutputLines, ALineEndsAfterItsNewlineOrCarriageReturn) {
  EXPECT_EQ(line_end("loading\nnext"), 8u);
  EXPECT_EQ(line_end("\r 10%|#"), 1u);
  EXPECT_EQ(line_end("no end yet"), std::string::npos);
}

TEST(OutputLines, AfterACarriageReturnWhatHasArrivedIsAnUpdateOfItsOwn) {
  EXPECT_EQ(line_end(" 20%|##  ", true), 9u);
  EXPECT_EQ(line_end("", true), std::string::npos);
}

TEST(OutputLines, AnEndlessLineIsCutBeforeAUtf8CharacterNotInsideIt) {
  EXPECT_EQ(line_end(std::string(kMaxOutputLine + 10, 'x')), kMaxOutputLine);
  // "é" (2 bytes) straddles the limit: the piece ends before it.
  const std::string straddling = std::string(kMaxOutputLine - 1, 'x') + "\xc3\xa9" + "tail";
  EXPECT_EQ(line_end(straddling), kMaxOutputLine - 1);
}

TEST(OutputLines, TerminatorsAreDroppedAndTheNextReadKnowsATqdmStream) {
  bool after_cr = false;
  EXPECT_EQ(take_line("Loading weights\n", after_cr), "Loading weights");
  EXPECT_FALSE(after_cr);
  EXPECT_EQ(take_line(" 50%|#####\r", after_cr), " 50%|#####");
  EXPECT_TRUE(after_cr);
  EXPECT_EQ(take_line("done\n", after_cr), "done");
  EXPECT_FALSE(after_cr);
}

TEST(OutputLines, EmptyLinesAndTqdmsPaddingAreNotPassedOn) {
  bool after_cr = false;
  EXPECT_FALSE(take_line("\n", after_cr));
  EXPECT_FALSE(take_line("      \r", after_cr));
  EXPECT_TRUE(after_cr);
  // Spaces ended by a newline are a line the engine printed.
  EXPECT_EQ(take_line("   \n", after_cr), "   ");
  // The output's end without a terminator.
  EXPECT_EQ(take_line("last words", after_cr), "last words");
}

}  // namespace
}  // namespace gl
