// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text from untrusted places (file names in a model or cache directory, engine lines, journal
// messages) made safe for root's terminal: whatever could move the cursor, rewrite the screen,
// set the clipboard (OSC 52), reorder what is shown or forge a line is shown as an escape
// instead. One entry stays one line.

#include <string>
#include <string_view>

namespace gl {

// C0 controls (newline and tab included) and DEL as \xNN; C1 controls (U+0080..U+009F) and the
// bidi controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) as \uNNNN; each byte
// that is not part of valid UTF-8 (overlong, surrogate, past U+10FFFF, cut short) as \xNN.
// Everything else, backslashes included, is kept as it is.
std::string terminal_text(std::string_view text);

// Text of several lines (a rank's JSON answer, a profile written from discovered paths): each
// line as terminal_text, the line breaks kept.
std::string terminal_lines(std::string_view text);

}  // namespace gl
