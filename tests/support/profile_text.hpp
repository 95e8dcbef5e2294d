// SPDX-License-Identifier: Apache-2.0
#pragma once
// A profile from its TOML text, loaded and validated as the one file /p/x.toml (so named "x"):
// the test fails where it does not load.

#include <string>

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl::testing {

inline Profile profile_from(const std::string& text) {
  MemorySource source({{"/p/x.toml", text}});
  auto profile = load_profile(source, "x");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

}  // namespace gl::testing
