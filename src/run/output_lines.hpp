// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the engine's output becomes journal lines: where a line ends (LineEnd, the bridge's read
// condition over whatever bytes have arrived) and what of a read line is passed on (take_line).

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace gl {

// Longest engine output line passed on whole; a longer one goes to the journal in pieces of at
// most this many bytes. Below journald's default LineMax= (48K), so each piece stays one record.
inline constexpr std::size_t kMaxOutputLine = 32 * 1024;

// A line ends at '\n' or '\r': tqdm redraws progress bars with carriage returns. A longer run
// of bytes without either ends after kMaxOutputLine bytes, before a UTF-8 character rather than
// inside one, so the engine can never fill the buffer and stop the reading.
//
// tqdm writes each update as one write(2) of "\r" + the bar, and the bar's end only when the next
// update's "\r" comes, a shard later, which may be minutes into a long load (or after the
// deadline it should have pushed back). So after a '\r', the bytes that have arrived are an
// update of their own: each update becomes one line, read when it is written. The journal gets
// every update as a line, not only each bar's last: its timestamps show the pace of a load that
// may stall, a follower of `logs -f` sees it move, and a loader updates once per shard.
//
// The shape of Asio's read_until match condition: {end of the line, true}, or {begin, false}
// while the line goes on ("partial match at begin": the next search starts from the line's first
// byte again, so the length counts the whole line).
struct LineEnd {
  bool after_carriage_return = false;

  template <class Iterator>
  std::pair<Iterator, bool> operator()(Iterator begin, Iterator end) const {
    Iterator char_start = begin;
    std::size_t length = 0;
    for (Iterator it = begin; it != end; ++it, ++length) {
      const auto byte = static_cast<unsigned char>(*it);
      const bool continuation = (byte & 0xC0) == 0x80;
      if (length == kMaxOutputLine)
        return {continuation && char_start != begin ? char_start : it, true};
      if (byte == '\n' || byte == '\r') return {++it, true};
      if (!continuation) char_start = it;
    }
    if (after_carriage_return && begin != end) return {end, true};
    return {begin, false};
  }
};

// A line as read (with its '\n' or '\r', or a piece or the output's end without either): the
// text to pass on without its terminators, or nullopt for nothing (an empty line, or tqdm's
// padding of spaces before a '\r'). Updates `after_carriage_return` for the next LineEnd.
std::optional<std::string> take_line(std::string line, bool& after_carriage_return);

}  // namespace gl
