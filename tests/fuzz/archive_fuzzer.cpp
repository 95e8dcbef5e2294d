// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: arbitrary bytes as a cache archive, through what `cache import` reads before
// and while it writes: libarchive's tar and zstd reader (util/tar_archive), the manifest and the
// file lists (caches/archive_manifest), every member's name check, and each member's content
// streamed block by block into the stored digest (util/sha256's StoredHasher) within its size.
// Any crash, sanitizer report or hang is a finding.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "caches/archive_manifest.hpp"
#include "util/sha256.hpp"
#include "util/tar_archive.hpp"
#include "util/unique_fd.hpp"

namespace {

// Reads the current member whole, up to `bound` bytes; nullopt past it or on an error.
std::optional<std::string> read_small(gl::TarReader& reader, std::size_t bound) {
  std::string text;
  std::vector<char> buffer(4096);
  for (;;) {
    auto got = reader.read_data(buffer);
    if (!got) return std::nullopt;
    if (*got == 0) return text;
    text.append(buffer.data(), *got);
    if (text.size() > bound) return std::nullopt;
  }
}

void exercise(int fd) {
  auto reader = gl::TarReader::open(fd, "fuzz");
  if (!reader) return;
  for (int members = 0; members < 256; ++members) {
    auto member = reader->next();
    if (!member || !*member) return;
    const gl::ArchiveMember& header = **member;
    (void)gl::archived_path_problem(header.path);
    if (header.kind != gl::MemberKind::file) continue;
    if (header.path == gl::kManifestMember) {
      if (auto text = read_small(*reader, gl::kMaxManifestBytes))
        (void)gl::parse_manifest(*text, "fuzz");
      continue;
    }
    if (header.path.starts_with(gl::kRecordsDirectory)) {
      if (auto text = read_small(*reader, 1 << 20)) (void)gl::parse_records(*text, "fuzz");
      continue;
    }
    std::uint64_t stored = 0;
    gl::StoredHasher hasher(header.size, [&](std::uint64_t, std::span<const char> block) {
      stored += block.size();
      return gl::Result<void>{};
    });
    std::uint64_t next = 0;
    for (;;) {
      auto block = reader->read_block();
      if (!block) return;
      if (!*block) break;
      const auto& [offset, data] = **block;
      // The bounds import checks before the hasher sees the data.
      if (offset < next || offset > header.size || data.size() > header.size - offset) return;
      if (!hasher.add(offset, data)) __builtin_trap();  // within bounds it never refuses
      next = offset + data.size();
    }
    if (!hasher.finish() || stored > header.size) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gl::UniqueFd fd(::memfd_create("archive", MFD_CLOEXEC));
  if (!fd) return 0;
  for (size_t done = 0; done < size;) {
    const ssize_t wrote = ::write(fd.get(), data + done, size - done);
    if (wrote <= 0) return 0;
    done += static_cast<size_t>(wrote);
  }
  ::lseek(fd.get(), 0, SEEK_SET);
  exercise(fd.get());
  return 0;
}
