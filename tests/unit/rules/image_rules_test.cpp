// SPDX-License-Identifier: Apache-2.0
// check on an engine.image profile through its real path: facts gathered with a fake podman on
// the node's PATH answering from an image root laid out as vLLM's cu130 image, then judged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "facts/gather.hpp"
#include "rules/check.hpp"
#include "support/image_fixture.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

using ::testing::Contains;
using ::testing::Not;

struct ImageNode {
  testing::TempDir node;
  testing::TempDir image;
  testing::TempDir scratch;
  test::ImageSpec spec;

  explicit ImageNode(test::ImageSpec with = {}) : spec(std::move(with)) {
    test::write_image_root(image.path(), spec);
    auto inspect = scratch.write("inspect.json", test::image_inspect_json(spec));
    test::write_fake_podman(node.path() / "usr/bin/podman", spec, inspect, image.path(),
                            scratch.path() / "podman.log");
  }
  void cdi_for(const std::string& device) {
    node.write("etc/cdi/nvidia.yaml",
               "kind: nvidia.com/gpu\ndevices:\n- name: \"" + device + "\"\n- name: all\n");
  }
  std::string podman_log() const {
    std::ifstream in(scratch.path() / "podman.log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

Profile image_profile(const std::string& reference) {
  Profile profile;
  profile.name = "img";
  profile.engine.kind = EngineKind::vllm;
  profile.engine.image = reference;
  profile.model.path = "/models/qwen";
  profile.server.port = 8000;
  profile.service.user = "gpulaunch";
  return profile;
}

Facts gather(const ImageNode& fixture, const Profile& profile, const std::string& driver,
             const std::string& max_cuda) {
  auto plan = make_launch_plan(profile);
  auto request = facts_request(profile, plan, ShellEnvironment{});
  request.probe_ports = false;
  request.probe_cache.reset();
  request.installed_profiles = nullptr;
  auto facts = gather_facts(NodeFs(fixture.node.path()), request);
  facts.driver = {true, "nvml", driver, max_cuda, {}};
  facts.gpus = {{0, "NVIDIA H100 80GB HBM3", "GPU-0", 9, 0, 81559}};
  return facts;
}

std::vector<std::string> codes(const std::vector<Finding>& findings) {
  std::vector<std::string> list;
  for (const auto& finding : findings) list.push_back(finding.code);
  return list;
}

const Finding* find(const std::vector<Finding>& findings, const std::string& code) {
  for (const auto& finding : findings)
    if (finding.code == code) return &finding;
  return nullptr;
}

TEST(ImageCheck, FactsComeFromPodmanInspectAndMount) {
  ImageNode fixture;
  fixture.cdi_for("0");
  auto profile = image_profile(fixture.spec.reference);
  auto facts = gather(fixture, profile, "580.95.05", "13.0");
  ASSERT_TRUE(facts.image);
  EXPECT_TRUE(facts.image->problems.empty());
  EXPECT_EQ(facts.image->cuda_version, "13.0.1");
  ASSERT_TRUE(facts.python);
  EXPECT_EQ(facts.python->packages.at("vllm"), "0.11.0");
  EXPECT_EQ(fixture.podman_log(),
            "image inspect -- localhost/vllm-openai:v0.11.0-cu130\n"
            "image mount -- localhost/vllm-openai:v0.11.0-cu130\n"
            "image unmount -- localhost/vllm-openai:v0.11.0-cu130\n"
            "--version\n");
  auto findings = evaluate(profile, make_launch_plan(profile), facts, ShellEnvironment{});
  for (auto code : {"driver-too-old-for-image", "image-needs-forward-compat", "image-unreadable",
                    "cdi-device-missing", "driver-too-old-for-torch"})
    EXPECT_THAT(codes(findings), Not(Contains(code)));
}

// The seed's class of failure, moved into an image: cu130 on a 570 driver with no compat
// libcuda crash-loops with CUDA error 803 while nvidia-smi inside still works.
TEST(ImageCheck, Cu130ImageOnA570DriverWithoutCompatIsAnErrorWithItsFix) {
  test::ImageSpec spec;
  spec.compat_driver.reset();
  ImageNode fixture(spec);
  fixture.cdi_for("0");
  auto profile = image_profile(spec.reference);
  auto findings = evaluate(profile, make_launch_plan(profile),
                           gather(fixture, profile, "570.172.08", "12.8"), ShellEnvironment{});
  const Finding* finding = find(findings, "driver-too-old-for-image");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::error);
  EXPECT_EQ(finding->summary,
            "the driver runs CUDA up to 12.8, the image localhost/vllm-openai:v0.11.0-cu130 is "
            "built for CUDA 13.0 and carries no forward-compatibility libcuda for it");
  EXPECT_THAT(finding->rule, ::testing::HasSubstr("error 803/804"));
  EXPECT_EQ(finding->fix,
            "upgrade the driver to >= 580 for CUDA 13, or use an image built for CUDA 12");
  EXPECT_THAT(codes(findings), Not(Contains("driver-too-old-for-torch")));
}

TEST(ImageCheck, Cu130ImageWithCompatLibcudaOnA570DriverIsAWarning) {
  ImageNode fixture;
  fixture.cdi_for("0");
  auto profile = image_profile(fixture.spec.reference);
  auto findings = evaluate(profile, make_launch_plan(profile),
                           gather(fixture, profile, "570.172.08", "12.8"), ShellEnvironment{});
  EXPECT_THAT(codes(findings), Not(Contains("driver-too-old-for-image")));
  const Finding* finding = find(findings, "image-needs-forward-compat");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::warning);
  EXPECT_THAT(finding->rule, ::testing::HasSubstr("data-center GPUs"));
}

TEST(ImageCheck, AGpuNoCdiSpecNamesIsAnError) {
  ImageNode fixture;
  fixture.cdi_for("1");
  auto profile = image_profile(fixture.spec.reference);
  auto findings = evaluate(profile, make_launch_plan(profile),
                           gather(fixture, profile, "580.95.05", "13.0"), ShellEnvironment{});
  const Finding* finding = find(findings, "cdi-device-missing");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->summary, "no CDI spec offers nvidia.com/gpu=0");
  EXPECT_THAT(finding->fix, ::testing::HasSubstr("nvidia-ctk cdi generate"));
}

// After a driver upgrade the spec still mounts the old driver's libcuda.so.X.Y.Z (as
// nvidia-ctk writes it): stale, with how to regenerate it. The current driver's spec says nothing.
TEST(ImageCheck, ACdiSpecForAnotherDriverIsStale) {
  ImageNode fixture;
  const std::string spec =
      "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\ncontainerEdits:\n"
      "  mounts:\n  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20\n"
      "    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20\n";
  fixture.node.write("etc/cdi/nvidia.yaml", spec);
  auto profile = image_profile(fixture.spec.reference);
  auto findings = evaluate(profile, make_launch_plan(profile),
                           gather(fixture, profile, "580.95.05", "13.0"), ShellEnvironment{});
  const Finding* finding = find(findings, "cdi-spec-stale");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::error);
  EXPECT_EQ(finding->summary,
            "the CDI spec was generated for driver 570.133.20; this node runs 580.95.05");
  EXPECT_THAT(finding->fix, ::testing::HasSubstr("nvidia-ctk cdi generate"));

  ImageNode current;
  std::string fresh = spec;
  for (size_t at; (at = fresh.find("570.133.20")) != std::string::npos;)
    fresh.replace(at, 10, "580.95.05");
  current.node.write("etc/cdi/nvidia.yaml", fresh);
  auto clean = evaluate(profile, make_launch_plan(profile),
                        gather(current, profile, "580.95.05", "13.0"), ShellEnvironment{});
  EXPECT_EQ(find(clean, "cdi-spec-stale"), nullptr);
}

// A spec written by a newer NVIDIA Container Toolkit (CDI 0.7.0) on Debian 12's podman 4.3,
// whose CDI library reads up to 0.5.0: refused before podman fails every device.
TEST(ImageCheck, ACdiSpecNewerThanPodmanReadsIsAnError) {
  ImageNode fixture;
  fixture.node.write("etc/cdi/nvidia.yaml",
                     "cdiVersion: \"0.7.0\"\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n");
  auto profile = image_profile(fixture.spec.reference);
  auto findings = evaluate(profile, make_launch_plan(profile),
                           gather(fixture, profile, "580.95.05", "13.0"), ShellEnvironment{});
  const Finding* finding = find(findings, "cdi-spec-too-new");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->summary,
            "the CDI spec /etc/cdi/nvidia.yaml is version 0.7.0; podman 4.3.1 reads at most 0.5.0");
  fixture.node.write("etc/cdi/nvidia.yaml",
                     "cdiVersion: \"0.5.0\"\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n");
  auto readable = evaluate(profile, make_launch_plan(profile),
                           gather(fixture, profile, "580.95.05", "13.0"), ShellEnvironment{});
  EXPECT_EQ(find(readable, "cdi-spec-too-new"), nullptr);
  // A podman whose library gpulaunch has not read is not judged.
  test::ImageSpec newer;
  newer.podman_version = "5.4.0";
  ImageNode other(newer);
  other.node.write("etc/cdi/nvidia.yaml",
                   "cdiVersion: \"0.7.0\"\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n");
  auto unjudged = evaluate(profile, make_launch_plan(profile),
                           gather(other, profile, "580.95.05", "13.0"), ShellEnvironment{});
  EXPECT_EQ(find(unjudged, "cdi-spec-too-new"), nullptr);
}

TEST(ImageCheck, AnImageNotInTheStoreIsAnError) {
  ImageNode fixture;
  fixture.cdi_for("0");
  auto profile = image_profile("localhost/not-pulled:1");
  auto findings = evaluate(profile, make_launch_plan(profile),
                           gather(fixture, profile, "580.95.05", "13.0"), ShellEnvironment{});
  const Finding* finding = find(findings, "image-unreadable");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::error);
  EXPECT_THAT(finding->fix, ::testing::HasSubstr("podman pull localhost/not-pulled:1"));
}

// Issue 45: root's podman bind-mounts model.path by name at every start. The hostile user (a uid
// of its own, as the integration suites' glhostile) shares the model's directory with root as
// /tmp is shared, and plants a link to a root-only tree where the model was: `check` (and with it
// `up`) refuses the mount, naming the path and who planted it. A model reached only through
// root's directories passes.
TEST(ImageCheck, AMountSourceAUserCanReplaceIsRefusedNamingWho) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another uid";
  constexpr uid_t kHostile = 4242;
  ImageNode fixture;
  fixture.cdi_for("0");
  ::chmod(fixture.node.path().c_str(), 0755);
  fixture.node.write("models/qwen/config.json", "{}");
  fixture.node.write("root/secret/qwen/token", "root's");
  ::chmod((fixture.node.path() / "root").c_str(), 0700);
  auto profile = image_profile(fixture.spec.reference);
  profile.caches.root = "/var/cache/gpulaunch/img";  // as the loader sets it
  auto judged = [&] {
    return evaluate(profile, make_launch_plan(profile),
                    gather(fixture, profile, "580.95.05", "13.0"), ShellEnvironment{});
  };
  EXPECT_EQ(find(judged(), "image-mount-replaceable"), nullptr);
  ::chmod((fixture.node.path() / "models").c_str(), 01777);
  const std::string planted = (fixture.node.path() / "models" / "qwen").string();
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kHostile) != 0 || ::setuid(kHostile) != 0)
      ::_exit(2);
    // Its own entry in the shared directory: the model, renamed away and replaced by a link.
    ::_exit(::symlink("/root/secret/qwen", (planted + ".new").c_str()) == 0 &&
                    ::rename((planted + ".new").c_str(), (planted + ".link").c_str()) == 0
                ? 0
                : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  profile.model.path = "/models/qwen.link";
  auto findings = judged();
  const Finding* finding = find(findings, "image-mount-replaceable");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::error);
  EXPECT_EQ(finding->summary,
            "root's podman would bind-mount '/models/qwen.link' into the container, and "
            "'/models/qwen.link' is a symbolic link (owned by uid 4242), which root would follow");
  // The model root placed there itself is the user's to replace too, being in a shared directory
  // the user can write: only its owner's entries are safe there.
  ASSERT_EQ(::chown(planted.c_str(), kHostile, kHostile), 0);
  profile.model.path = "/models/qwen";
  findings = judged();
  finding = find(findings, "image-mount-replaceable");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->summary,
            "root's podman would bind-mount '/models/qwen' into the container, and '/models/qwen' "
            "is owned by uid 4242 in the shared sticky '/models' (mode 1777), so that user can "
            "replace it");
}

}  // namespace
}  // namespace gl
