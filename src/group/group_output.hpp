// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the group's steps report: one line per step and rank, as operators read them on stdout,
// and the one error that ends a step. cli/ prints them; tests keep them and compare.

#include <string>

namespace gl {

class GroupOutput {
 public:
  virtual ~GroupOutput() = default;
  virtual void line(const std::string& text) = 0;
  virtual void error(const std::string& text) = 0;
};

}  // namespace gl
