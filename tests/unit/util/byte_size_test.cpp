// SPDX-License-Identifier: Apache-2.0
// Sizes as `cache`, `warm` and `run`'s progress lines show them.

#include "util/byte_size.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

constexpr std::uint64_t GiB = 1ULL << 30;

TEST(ByteSize, BytesStayWholeAndLargerSizesGetOneDecimalInBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_bytes(300 * 1024), "300.0 KiB");
  EXPECT_EQ(format_bytes(64ULL << 20), "64.0 MiB");
  EXPECT_EQ(format_bytes(3 * GiB / 2), "1.5 GiB");
  EXPECT_EQ(format_bytes(5ULL << 50), "5.0 PiB");
  EXPECT_EQ(format_bytes(5ULL << 60), "5120.0 PiB");  // no unit above PiB
}

}  // namespace
}  // namespace gl
