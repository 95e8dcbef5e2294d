// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: arbitrary bytes as a profile (with a parent and a drop-in), through the same
// parse -> validate -> render -> text chain as `gpulaunch render`. Any crash, sanitizer report or
// toml++ assertion is a finding.

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "unit/escape.hpp"
#include "unit/render.hpp"

namespace {

constexpr const char* kParent = R"(
[engine]
kind = "sglang"
venv = "/opt/venv"
[model]
path = "/models/m"
[parallelism]
tp = 2
)";

void exercise(const std::string& input, bool as_dropin) {
  std::map<std::string, std::string> files{{"/fuzz/base.toml", kParent}};
  if (as_dropin) {
    files["/fuzz/input.toml"] = "extends = \"base\"\n";
    files["/fuzz/input.toml.d/10-fuzz.toml"] = input;
  } else {
    files["/fuzz/input.toml"] = input;
  }
  gl::MemorySource source(std::move(files));
  auto merged = gl::load_merged(source, "/fuzz/input.toml");
  if (!merged) return;
  std::ostringstream shown;
  shown << merged->table;  // what `gpulaunch show` prints
  auto profile = gl::validate_profile(*merged);
  if (!profile) return;
  gl::RenderOptions options;
  options.version = "fuzz";
  const std::string unit =
      gl::render_unit(*profile, gl::make_launch_plan(*profile), options).to_text();
  if (unit.empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  exercise(input, false);
  exercise(input, true);
  (void)gl::quote_exec_word(input);
  return 0;
}
