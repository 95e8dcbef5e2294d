// SPDX-License-Identifier: Apache-2.0
#pragma once
// A journal whose answers a test scripts: an invocation's lines as they arrive read after read
// (journald takes the last lines from the stream a moment after the process ended), the kernel's.

#include <algorithm>
#include <string>
#include <vector>

#include "systemd/journal.hpp"

namespace gl::testing {

class FakeJournal final : public Journal {
 public:
  // What each read of the invocation answers, in order; the last answer repeats.
  std::vector<std::vector<JournalEntry>> invocation_reads;
  // Kernel messages; kernel_since() answers those at or after `since` that contain the text.
  std::vector<JournalEntry> kernel;
  std::vector<JournalEntry> unit_lines;  // tail() and follow()
  int invocation_calls = 0;

  // One read answering these lines, each a JournalEntry at `usec` whose cursor is
  // cursor_of(its index): sd-journal's cursors are opaque, unique and stable across reads.
  static std::vector<JournalEntry> lines(const std::vector<std::string>& messages,
                                         uint64_t usec = 1) {
    std::vector<JournalEntry> entries;
    for (const auto& message : messages)
      entries.push_back(JournalEntry{usec, "gpulaunch", 1, message, cursor_of(entries.size())});
    return entries;
  }
  static std::string cursor_of(size_t index) {
    return "s=fa4e;i=" + std::to_string(index) + ";b=b007;m=" + std::to_string(index) + ";x=0";
  }

  Result<std::vector<JournalEntry>> tail(std::string_view, size_t count) override {
    const size_t skip = unit_lines.size() > count ? unit_lines.size() - count : 0;
    return std::vector<JournalEntry>(unit_lines.begin() + static_cast<std::ptrdiff_t>(skip),
                                     unit_lines.end());
  }
  Result<void> follow(std::string_view,
                      const std::function<bool(const JournalEntry&)>& sink) override {
    for (const auto& entry : unit_lines)
      if (!sink(entry)) break;
    return {};
  }
  Result<std::vector<JournalEntry>> invocation(std::string_view) override {
    const size_t read = static_cast<size_t>(invocation_calls++);
    if (invocation_reads.empty()) return std::vector<JournalEntry>{};
    return invocation_reads[std::min(read, invocation_reads.size() - 1)];
  }
  Result<std::vector<JournalEntry>> kernel_since(uint64_t since_usec,
                                                 std::string_view text) override {
    std::vector<JournalEntry> found;
    for (const auto& entry : kernel)
      if (entry.realtime_usec >= since_usec && entry.message.find(text) != std::string::npos)
        found.push_back(entry);
    return found;
  }
};

}  // namespace gl::testing
