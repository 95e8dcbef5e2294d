// SPDX-License-Identifier: Apache-2.0
// gpulaunch-record-start: the unit's ExecStartPost=. Its own executable, linked with only what
// recording a start needs, because the start job (and `up`, which waits on it) is held until it
// exits: the full gpulaunch loads 25 libraries and builds every command before it starts
// (bench/up_ready_bench.sh measures the difference).

#include <exception>

#include <CLI/CLI.hpp>

#include "cli/record_start.hpp"
#include "gpulaunch_version.hpp"
#include "log/logger.hpp"
#include "profile/profile_name.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Record the phases of the start that just became ready (the unit's ExecStartPost=)",
               "gpulaunch-record-start"};
  app.set_version_flag("--version", std::string("gpulaunch-record-start ") + GPULAUNCH_VERSION);
  std::string profile;
  app.add_option("--profile", profile, "Profile name")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  gl::logging::configure({gl::logging::Level::info, gl::logging::Stream::err, ""});
  if (auto valid = gl::check_profile_name(profile); !valid) {
    gl::logging::error(fmt::format("gpulaunch-record-start: {}", valid.error().message));
    return 2;
  }
  try {
    return gl::record_start(profile);
  } catch (const std::exception& error) {
    gl::logging::error(fmt::format("gpulaunch-record-start: internal error: {}", error.what()));
    return 0;  // never fail the unit over a record
  }
}
