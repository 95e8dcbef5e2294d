// SPDX-License-Identifier: Apache-2.0
#include "util/sha256.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include <algorithm>
#include <vector>

#include <unistd.h>

#include <nettle/sha2.h>

#include "util/try.hpp"

namespace gl {
namespace {

// Nettle's SHA-256 (the library libarchive already loads): a plain struct, nothing to free.
using Context = std::unique_ptr<sha256_ctx>;

Context new_context() {
  auto context = std::make_unique<sha256_ctx>();
  sha256_init(context.get());
  return context;
}

void update(sha256_ctx* context, const void* data, std::size_t size) {
  sha256_update(context, size, static_cast<const std::uint8_t*>(data));
}

std::string finish(sha256_ctx* context) {
  std::array<std::uint8_t, SHA256_DIGEST_SIZE> digest{};
  sha256_digest(context, digest.size(), digest.data());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(digest.size() * 2);
  for (const std::uint8_t byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  return hex;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  auto context = new_context();
  update(context.get(), data.data(), data.size());
  return finish(context.get());
}

Result<std::string> sha256_file_hex(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return failf("Failed to hash '{}': {}", path.string(), std::strerror(errno));
  auto context = new_context();
  std::array<char, 1 << 16> buffer{};
  while (in) {
    in.read(buffer.data(), buffer.size());
    if (in.gcount() > 0) update(context.get(), buffer.data(), in.gcount());
  }
  if (in.bad()) return failf("Failed to hash '{}': read error", path.string());
  return finish(context.get());
}

Result<std::string> sha256_fd_hex(int fd, std::string_view shown) {
  auto context = new_context();
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return failf("Failed to hash '{}': {}", shown, std::strerror(errno));
    }
    update(context.get(), buffer.data(), static_cast<size_t>(got));
  }
  return finish(context.get());
}

Result<StoredDigest> sha256_stored_hex(int fd, std::uint64_t size, std::string_view shown) {
  auto context = new_context();
  StoredDigest digest;
  std::vector<char> block(kStoredBlock);
  const auto fail = [&] { return failf("Failed to hash '{}': {}", shown, std::strerror(errno)); };
  std::uint64_t next = 0;  // the first block not yet hashed; extents come in offset order
  while (next * kStoredBlock < size) {
    auto data = static_cast<std::uint64_t>(next * kStoredBlock);
    auto hole = size;
    const off_t found = ::lseek(fd, static_cast<off_t>(data), SEEK_DATA);
    if (found < 0) {
      if (errno == ENXIO) break;           // only a hole is left
      if (errno != EINVAL) return fail();  // EINVAL: no hole support here, read it all
    } else {
      data = static_cast<std::uint64_t>(found);
      const off_t end = ::lseek(fd, found, SEEK_HOLE);
      if (end < 0) return fail();
      hole = std::min(size, static_cast<std::uint64_t>(end));
    }
    const std::uint64_t last = (hole + kStoredBlock - 1) / kStoredBlock;
    for (std::uint64_t index = std::max(next, data / kStoredBlock); index < last; ++index) {
      const std::uint64_t offset = index * kStoredBlock;
      const std::size_t want = static_cast<std::size_t>(std::min(kStoredBlock, size - offset));
      std::size_t got = 0;
      while (got < want) {
        const ssize_t n =
            ::pread(fd, block.data() + got, want - got, static_cast<off_t>(offset + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail();
        if (n == 0) break;  // shrunk while read: hash what is there
        got += static_cast<std::size_t>(n);
      }
      digest.read += got;
      if (std::all_of(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(got),
                      [](char c) { return c == 0; }))
        continue;
      unsigned char where[8];
      for (int i = 0; i < 8; ++i) where[i] = static_cast<unsigned char>(offset >> (8 * i));
      update(context.get(), where, sizeof where);
      update(context.get(), block.data(), got);
    }
    next = std::max(next, last);
  }
  digest.sha256 = finish(context.get());
  return digest;
}

struct StoredHasher::State {
  Context context;
  std::uint64_t size = 0;
  Sink stored;
  std::vector<char> block = std::vector<char>(kStoredBlock, '\0');
  std::uint64_t index = 0;  // the block in `block`
  bool touched = false;     // whether any data landed in it
  std::uint64_t next = 0;   // the offset add() may start at
};

StoredHasher::StoredHasher(std::uint64_t size, Sink stored) : state_(std::make_unique<State>()) {
  state_->context = new_context();
  state_->size = size;
  state_->stored = std::move(stored);
}
StoredHasher::StoredHasher(StoredHasher&&) noexcept = default;
StoredHasher::~StoredHasher() = default;

Result<void> StoredHasher::flush() {
  State& s = *state_;
  if (!s.touched) return {};
  s.touched = false;
  const std::uint64_t offset = s.index * kStoredBlock;
  const auto length = static_cast<std::size_t>(std::min(kStoredBlock, s.size - offset));
  const auto begin = s.block.begin();
  const bool zero = std::all_of(begin, begin + static_cast<std::ptrdiff_t>(length),
                                [](char c) { return c == 0; });
  if (!zero) {
    unsigned char where[8];
    for (int i = 0; i < 8; ++i) where[i] = static_cast<unsigned char>(offset >> (8 * i));
    update(s.context.get(), where, sizeof where);
    update(s.context.get(), s.block.data(), length);
    if (s.stored) GL_TRY_VOID(s.stored(offset, {s.block.data(), length}));
  }
  std::fill(begin, begin + static_cast<std::ptrdiff_t>(length), '\0');
  return {};
}

Result<void> StoredHasher::add(std::uint64_t offset, std::span<const char> data) {
  State& s = *state_;
  if (offset < s.next) return failf("data at offset {} comes after offset {}", offset, s.next);
  if (offset > s.size || data.size() > s.size - offset)
    return failf("data at offset {} runs past the size of {} bytes", offset, s.size);
  while (!data.empty()) {
    const std::uint64_t index = offset / kStoredBlock;
    if (index != s.index) {
      GL_TRY_VOID(flush());
      s.index = index;
    }
    const auto at = static_cast<std::size_t>(offset % kStoredBlock);
    const std::size_t take = std::min<std::size_t>(data.size(), kStoredBlock - at);
    std::copy(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take), s.block.begin() + at);
    s.touched = true;
    data = data.subspan(take);
    offset += take;
  }
  s.next = offset;
  return {};
}

Result<std::string> StoredHasher::finish() {
  GL_TRY_VOID(flush());
  return gl::finish(state_->context.get());
}

}  // namespace gl
