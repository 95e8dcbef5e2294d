// SPDX-License-Identifier: Apache-2.0
#include "systemd/journal.hpp"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "systemd/libsystemd.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

std::string field(sd_journal* journal, const char* name) {
  const void* data = nullptr;
  size_t length = 0;
  if (libsystemd::sym_sd_journal_get_data(journal, name, &data, &length) < 0) return {};
  std::string_view text(static_cast<const char*>(data), length);
  const size_t prefix = std::strlen(name) + 1;  // "NAME="
  // The threshold bounds what sd-journal decompresses; an uncompressed field comes whole from
  // the mapped file, so the copy is cut here as well.
  return text.size() >= prefix ? std::string(text.substr(prefix, kJournalFieldBytes))
                               : std::string{};
}

JournalEntry read_entry(sd_journal* journal) {
  JournalEntry entry;
  libsystemd::sym_sd_journal_get_realtime_usec(journal, &entry.realtime_usec);
  entry.identifier = field(journal, "SYSLOG_IDENTIFIER");
  if (entry.identifier.empty()) entry.identifier = field(journal, "_COMM");
  std::string pid = field(journal, "_PID");
  entry.pid = pid.empty() ? 0 : static_cast<uint32_t>(std::strtoul(pid.c_str(), nullptr, 10));
  entry.message = field(journal, "MESSAGE");
  char* cursor = nullptr;
  if (libsystemd::sym_sd_journal_get_cursor(journal, &cursor) >= 0 && cursor) {
    entry.cursor = cursor;
    std::free(cursor);
  }
  return entry;
}

class SdJournal final : public Journal {
 public:
  explicit SdJournal(sd_journal* journal) : journal_(journal) {}
  ~SdJournal() override { libsystemd::sym_sd_journal_close(journal_); }

  Result<std::vector<JournalEntry>> tail(std::string_view unit, size_t count) override {
    GL_TRY_VOID(match(unit));
    int r = libsystemd::sym_sd_journal_seek_tail(journal_);
    if (r < 0) return failf("Failed to seek the journal: {}", std::strerror(-r));
    size_t back = 0;
    while (back < count && (r = libsystemd::sym_sd_journal_previous(journal_)) > 0) ++back;
    if (r < 0) return failf("Failed to read the journal: {}", std::strerror(-r));
    std::vector<JournalEntry> entries;
    if (back == 0) return entries;
    entries.push_back(read_entry(journal_));
    while (entries.size() < back && (r = libsystemd::sym_sd_journal_next(journal_)) > 0)
      entries.push_back(read_entry(journal_));
    return entries;
  }

  Result<void> follow(std::string_view unit,
                      const std::function<bool(const JournalEntry&)>& sink) override {
    for (;;) {
      int r;
      while ((r = libsystemd::sym_sd_journal_next(journal_)) > 0)
        if (!sink(read_entry(journal_))) return {};
      if (r < 0) return failf("Failed to read the journal of '{}': {}", unit, std::strerror(-r));
      r = libsystemd::sym_sd_journal_wait(journal_, static_cast<uint64_t>(-1));
      if (r < 0) return failf("Failed to wait for the journal: {}", std::strerror(-r));
    }
  }

  Result<std::vector<JournalEntry>> invocation(std::string_view invocation_id) override {
    libsystemd::sym_sd_journal_flush_matches(journal_);
    const std::string id = "_SYSTEMD_INVOCATION_ID=" + std::string(invocation_id);
    int r = libsystemd::sym_sd_journal_add_match(journal_, id.c_str(), 0);
    if (r < 0) return failf("Failed to filter the journal: {}", std::strerror(-r));
    std::vector<JournalEntry> entries;
    if ((r = libsystemd::sym_sd_journal_seek_tail(journal_)) < 0)
      return failf("Failed to seek the journal: {}", std::strerror(-r));
    size_t bytes = 0;
    while (entries.size() < kInvocationEntries && bytes < kInvocationBytes &&
           (r = libsystemd::sym_sd_journal_previous(journal_)) > 0) {
      entries.push_back(read_entry(journal_));
      bytes += entries.back().message.size();
    }
    if (r < 0) return failf("Failed to read the journal: {}", std::strerror(-r));
    std::reverse(entries.begin(), entries.end());
    return entries;
  }

  Result<std::vector<JournalEntry>> kernel_since(uint64_t since_usec,
                                                 std::string_view text) override {
    libsystemd::sym_sd_journal_flush_matches(journal_);
    int r = libsystemd::sym_sd_journal_add_match(journal_, "_TRANSPORT=kernel", 0);
    if (r < 0) return failf("Failed to filter the journal: {}", std::strerror(-r));
    if ((r = libsystemd::sym_sd_journal_seek_realtime_usec(journal_, since_usec)) < 0)
      return failf("Failed to seek the journal: {}", std::strerror(-r));
    std::vector<JournalEntry> entries;
    while ((r = libsystemd::sym_sd_journal_next(journal_)) > 0) {
      auto entry = read_entry(journal_);
      if (entry.realtime_usec < since_usec || entry.message.find(text) == std::string::npos)
        continue;
      if (entries.size() == kKernelEntries) entries.erase(entries.begin());
      entries.push_back(std::move(entry));
    }
    if (r < 0) return failf("Failed to read the journal: {}", std::strerror(-r));
    return entries;
  }

 private:
  Result<void> match(std::string_view unit) {
    libsystemd::sym_sd_journal_flush_matches(journal_);
    const std::string own = "_SYSTEMD_UNIT=" + std::string(unit);
    const std::string about = "UNIT=" + std::string(unit);
    // The unit's own lines, or systemd's (PID 1) lines about it.
    int r = libsystemd::sym_sd_journal_add_match(journal_, own.c_str(), 0);
    if (r >= 0) r = libsystemd::sym_sd_journal_add_disjunction(journal_);
    if (r >= 0) r = libsystemd::sym_sd_journal_add_match(journal_, "_PID=1", 0);
    if (r >= 0) r = libsystemd::sym_sd_journal_add_match(journal_, about.c_str(), 0);
    if (r < 0) return failf("Failed to filter the journal: {}", std::strerror(-r));
    return {};
  }

  sd_journal* journal_;
};

}  // namespace

Result<std::unique_ptr<Journal>> open_journal() {
  GL_TRY_VOID(libsystemd::load());
  sd_journal* journal = nullptr;
  int r = libsystemd::sym_sd_journal_open(&journal, SD_JOURNAL_LOCAL_ONLY);
  if (r < 0) return failf("Failed to open the journal: {}", std::strerror(-r));
  if ((r = libsystemd::sym_sd_journal_set_data_threshold(journal, kJournalFieldBytes)) < 0) {
    libsystemd::sym_sd_journal_close(journal);
    return failf("Failed to bound the journal's reads: {}", std::strerror(-r));
  }
  return std::unique_ptr<Journal>(std::make_unique<SdJournal>(journal));
}

Result<void> journal_send(const std::vector<std::string>& fields) {
  GL_TRY_VOID(libsystemd::load());
  std::vector<iovec> parts;
  parts.reserve(fields.size());
  for (const std::string& field : fields)
    parts.push_back({const_cast<char*>(field.data()), field.size()});
  const int r = libsystemd::sym_sd_journal_sendv(parts.data(), static_cast<int>(parts.size()));
  if (r < 0) return failf("Failed to write to the journal: {}", std::strerror(-r));
  return {};
}

bool stream_is_journal(int fd) {
  const char* value = std::getenv("JOURNAL_STREAM");
  if (!value) return false;
  const std::string_view text(value);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  unsigned long long device = 0, inode = 0;
  const auto [device_end, device_error] = std::from_chars(text.data(), text.data() + colon, device);
  const auto [inode_end, inode_error] =
      std::from_chars(text.data() + colon + 1, text.data() + text.size(), inode);
  if (device_error != std::errc{} || device_end != text.data() + colon ||
      inode_error != std::errc{} || inode_end != text.data() + text.size() || colon == 0)
    return false;
  struct stat status {};
  if (::fstat(fd, &status) != 0) return false;
  return status.st_dev == device && status.st_ino == inode;
}

void wait_journal_stream_read(int fd, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int unread = 0;
  while (::ioctl(fd, SIOCOUTQ, &unread) == 0 && unread > 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace gl
