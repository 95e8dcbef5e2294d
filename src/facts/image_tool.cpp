// SPDX-License-Identifier: Apache-2.0
#include "facts/image_tool.hpp"

#include <chrono>
#include <vector>

#include "util/process.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// Inspecting reads the store's metadata; mounting an image may unpack its layers first.
constexpr std::chrono::seconds kInspectTimeout{30};
constexpr std::chrono::seconds kMountTimeout{120};

class PodmanImageTool : public ImageTool {
 public:
  explicit PodmanImageTool(std::string program) : program_(std::move(program)) {}

  Result<std::string> inspect(const std::string& reference) override {
    return run({"image", "inspect", "--", reference}, kInspectTimeout, "inspect", reference);
  }

  Result<std::string> mount(const std::string& reference) override {
    GL_TRY(auto out, run({"image", "mount", "--", reference}, kMountTimeout, "mount", reference));
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (out.empty() || out.front() != '/' || out.find('\n') != std::string::npos)
      return failf("Failed to mount image '{}': podman printed no directory", reference);
    return out;
  }

  Result<void> unmount(const std::string& reference) override {
    GL_TRY_VOID(run({"image", "unmount", "--", reference}, kInspectTimeout, "unmount", reference));
    return {};
  }

  // "podman version 4.3.1" -> "4.3.1".
  Result<std::string> version() override {
    GL_TRY(auto out, run({"--version"}, kInspectTimeout, "ask the version of", program_));
    const std::string_view prefix = "podman version ";
    if (!out.starts_with(prefix)) return failf("'{} --version' printed no version", program_);
    std::string version = out.substr(prefix.size());
    while (!version.empty() && (version.back() == '\n' || version.back() == '\r'))
      version.pop_back();
    return version;
  }

 private:
  Result<std::string> run(std::vector<std::string> args, std::chrono::seconds timeout,
                          const char* verb, const std::string& reference) {
    GL_TRY(auto output, run_process(program_, args, timeout));
    if (output.exit_code != 0)
      return failf("Failed to {} image '{}': {} exited with status {}", verb, reference, program_,
                   output.exit_code);
    return std::move(output.out);
  }

  std::string program_;
};

}  // namespace

std::unique_ptr<ImageTool> podman_image_tool(const std::string& program) {
  return std::make_unique<PodmanImageTool>(program);
}

}  // namespace gl
