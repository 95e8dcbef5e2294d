// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "facts/image_facts.hpp"
#include "fakes/facts/fake_image_tool.hpp"
#include "support/image_fixture.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;

TEST(ImageFacts, InspectGivesDigestEnvAndTheCudaRequirement) {
  ImageFact image;
  image.reference = "localhost/vllm-openai:v0.11.0-cu130";
  ASSERT_TRUE(parse_image_inspect(test::image_inspect_json({}), image));
  EXPECT_EQ(image.digest,
            "sha256:9b2d6c1e5f0a4b3c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c");
  EXPECT_EQ(image.cuda_version, "13.0.1");
  EXPECT_EQ(image.require_cuda,
            "cuda>=13.0 brand=unknown,driver>=535,driver<536 brand=tesla,driver>=570,driver<571");
  EXPECT_EQ(image.labels.at("maintainer"), "NVIDIA CORPORATION <cudatools@nvidia.com>");
}

TEST(ImageFacts, InspectOutputThatIsNoImageIsAnError) {
  ImageFact image;
  image.reference = "x";
  EXPECT_FALSE(parse_image_inspect("[]", image));
  EXPECT_FALSE(parse_image_inspect("{\"Id\": 1", image));
}

TEST(ImageFacts, RootGivesCompatLibcudaAndTheImagesPython) {
  testing::TempDir root;
  test::write_image_root(root.path(), {});
  ImageFact image;
  auto python = read_image_root(NodeFs(root.path()), image);
  EXPECT_THAT(image.compat_libraries,
              ElementsAre("/usr/local/cuda-13.0/compat/libcuda.so.580.82.07"));
  EXPECT_EQ(image.compat_driver, "580.82.07");
  EXPECT_EQ(python.torch_version, "2.9.0+cu130");
  EXPECT_EQ(python.torch_cuda, "13.0");
  EXPECT_EQ(python.packages.at("vllm"), "0.11.0");
  EXPECT_EQ(python.packages.at("flashinfer"), "0.4.1");
}

// The image's files are read as root: a link is followed inside the image, never out of it.
TEST(ImageFacts, LinksInTheImageStayInsideIt) {
  testing::TempDir root;
  testing::TempDir outside;
  outside.write("dist-packages/torch/version.py", "__version__ = '9.9.9'\ncuda = '99.0'\n");
  test::ImageSpec spec;
  test::write_image_root(root.path(), spec);
  auto version_py = root.path() / "usr/local/lib/python3.12/dist-packages/torch/version.py";
  std::filesystem::remove(version_py);
  std::filesystem::create_symlink(outside.path() / "dist-packages/torch/version.py", version_py);
  ImageFact image;
  auto python = read_image_root(NodeFs(root.path()), image);
  EXPECT_EQ(python.torch_version, std::nullopt);
}

TEST(ImageFacts, ImageWithoutCompatPackageHasNoCompatLibcuda) {
  testing::TempDir root;
  test::ImageSpec spec;
  spec.compat_driver.reset();
  test::write_image_root(root.path(), spec);
  ImageFact image;
  read_image_root(NodeFs(root.path()), image);
  EXPECT_TRUE(image.compat_libraries.empty());
  EXPECT_EQ(image.compat_driver, std::nullopt);
}

TEST(ImageFacts, ProbeMountsReadsAndUnmounts) {
  testing::TempDir root;
  test::write_image_root(root.path(), {});
  test::FakeImageTool tool;
  tool.inspect_json = test::image_inspect_json({});
  tool.root = root.str();
  auto probe = probe_image(tool, "localhost/vllm-openai:v0.11.0-cu130");
  EXPECT_TRUE(probe.image.problems.empty());
  ASSERT_TRUE(probe.python);
  EXPECT_EQ(probe.python->torch_cuda, "13.0");
  EXPECT_THAT(tool.calls, ElementsAre("inspect localhost/vllm-openai:v0.11.0-cu130",
                                      "mount localhost/vllm-openai:v0.11.0-cu130",
                                      "unmount localhost/vllm-openai:v0.11.0-cu130"));
}

TEST(ImageFacts, AnImageNotInTheStoreIsAProblemNotAMount) {
  test::FakeImageTool tool;
  auto probe = probe_image(tool, "localhost/missing:1");
  EXPECT_THAT(probe.image.problems,
              ElementsAre("Failed to inspect image 'localhost/missing:1': podman exited with "
                          "status 125"));
  EXPECT_FALSE(probe.python);
  EXPECT_THAT(tool.calls, ElementsAre("inspect localhost/missing:1"));
}

TEST(ImageFacts, CdiSpecsNameTheGpuDevices) {
  testing::TempDir root;
  root.write("etc/cdi/nvidia.yaml",
             "---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n"
             "  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
             "- name: GPU-4b2d\n  containerEdits: {}\n- name: all\n");
  root.write("var/run/cdi/other.json", R"({"cdiVersion": "0.6.0", "kind": "vendor.com/fpga",
      "devices": [{"name": "f0"}]})");
  auto cdi = probe_cdi(NodeFs(root.path()));
  EXPECT_THAT(cdi.specs, ElementsAre("/etc/cdi/nvidia.yaml"));
  EXPECT_THAT(cdi.gpu_devices, ElementsAre("0", "GPU-4b2d", "all"));
}

}  // namespace
}  // namespace gl
