// SPDX-License-Identifier: Apache-2.0
#include "run/output_lines.hpp"

namespace gl {

std::optional<std::string> take_line(std::string line, bool& after_carriage_return) {
  const char terminator = line.empty() ? '\0' : line.back();
  if (terminator == '\r') after_carriage_return = true;
  if (terminator == '\n') after_carriage_return = false;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  // tqdm pads a shorter update with spaces, which a bar format ending in '\n' leaves before the
  // next '\r': nothing to pass on.
  const bool blank = line.find_first_not_of(' ') == std::string::npos;
  if (line.empty() || (terminator == '\r' && blank)) return std::nullopt;
  return line;
}

}  // namespace gl
