// SPDX-License-Identifier: Apache-2.0
// The node's side of a unit's plan, read from files laid out as pip and the kernel lay them out:
// what `up` renders with, and what `exec` and `warm --compile` render the same unit with again.

#include "plan/node_launch.hpp"

#include <gtest/gtest.h>

#include "support/profile_text.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

using testing::profile_from;

TEST(NodeLaunch, TheEngineReleaseAndInfinibandComeFromTheNode) {
  gl::testing::TempDir root;
  const Profile profile = profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
[model]
path = "/m"
)");
  auto bare = node_launch_options(profile, 0, NodeFs(root.path()));
  EXPECT_EQ(bare.options.engine_version, std::nullopt);
  EXPECT_FALSE(bare.options.infiniband);
  EXPECT_TRUE(bare.warnings.empty());

  root.write("v/lib/python3.12/site-packages/sglang-0.5.16.dist-info/METADATA",
             "Metadata-Version: 2.4\nName: sglang\nVersion: 0.5.16\n");
  root.write("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  auto node = node_launch_options(profile, 0, NodeFs(root.path()));
  EXPECT_EQ(node.options.engine_version, "0.5.16");
  EXPECT_TRUE(node.options.infiniband);
  // The release picks the launcher: the same command line `up` installs.
  EXPECT_EQ(engine_launcher(profile, node.options),
            (std::vector<std::string>{"/v/bin/sglang", "serve"}));
}

TEST(NodeLaunch, AGroupsRendezvousThatCannotBeRoutedIsAWarningNotAFailure) {
  gl::testing::TempDir root;
  const Profile group = profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
[model]
path = "/m"
[parallelism]
tp = 16
nodes = 2
dist_init_addr = "10.9.8.7:5000"
[gpus]
count = 8
)");
  // No /proc/net/route on this node root: nothing routes to rank 0.
  auto node = node_launch_options(group, 1, NodeFs(root.path()));
  EXPECT_EQ(node.options.node_rank, 1);
  EXPECT_EQ(node.options.socket_interface, std::nullopt);
  ASSERT_EQ(node.warnings.size(), 1U);
  EXPECT_TRUE(node.warnings[0].starts_with(
      "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME left to NCCL and Gloo: "))
      << node.warnings[0];
}

}  // namespace
}  // namespace gl
