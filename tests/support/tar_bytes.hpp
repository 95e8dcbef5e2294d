// SPDX-License-Identifier: Apache-2.0
#pragma once
// Uncompressed ustar archives built byte by byte, so a test can hand the importer what
// gpulaunch's own writer never makes: links, devices, absolute or climbing names, duplicates.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace gl::test {

struct TarMember {
  std::string name;
  std::string content = {};
  char type = '0';  // '0' file, '1' hard link, '2' symbolic link, '3' char device, '5' directory
  std::string link = {};  // for '1' and '2'
  unsigned mode = 0644;
};

inline std::string tar_bytes(const std::vector<TarMember>& members) {
  std::string out;
  for (const auto& member : members) {
    char header[512] = {};
    std::memcpy(header, member.name.data(), std::min<size_t>(member.name.size(), 100));
    std::snprintf(header + 100, 8, "%07o", member.mode);
    std::snprintf(header + 108, 8, "%07o", 0u);
    std::snprintf(header + 116, 8, "%07o", 0u);
    const size_t size = member.type == '0' ? member.content.size() : 0;
    std::snprintf(header + 124, 12, "%011zo", size);
    std::snprintf(header + 136, 12, "%011o", 0u);
    header[156] = member.type;
    std::memcpy(header + 157, member.link.data(), std::min<size_t>(member.link.size(), 100));
    std::memcpy(header + 257, "ustar", 6);
    std::memcpy(header + 263, "00", 2);
    std::memset(header + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : header) sum += c;
    std::snprintf(header + 148, 8, "%06o", sum);
    header[155] = ' ';
    out.append(header, sizeof header);
    if (size > 0) {
      out += member.content;
      out.append((512 - size % 512) % 512, '\0');
    }
  }
  out.append(1024, '\0');
  return out;
}

}  // namespace gl::test
