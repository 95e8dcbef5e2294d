// SPDX-License-Identifier: Apache-2.0
// A failing rank's notice: every other rank gets `peer-failed` with the classified stop, run as
// root with a clean environment, and its answer (or why there is none) comes back for the event.

#include "group/peer_notice.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fakes/group/fake_rank_runner.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using testing::FakeRankRunner;

NodesSettings three_nodes() {
  NodesSettings nodes;
  nodes.hosts = {"node-a", "node-b", "node-c"};
  nodes.gpulaunch = "/usr/bin/gpulaunch";
  return nodes;
}

TEST(PeerNotice, EveryOtherRankIsToldTheStopAndItsAnswerComesBack) {
  FakeRankRunner runner(
      {"node-a", "node-b", "node-c"}, [](long long rank, const std::vector<std::string>&) {
        if (rank == 0)
          return FakeRankRunner::Answer{
              0, "checking\npeer-failed: restart with the group: restart after 10s\n", ""};
        return FakeRankRunner::Answer{255, "ssh: connect to host node-c: No route\n", ""};
      });
  const Classification stop{ExitClass::cuda_oom, "torch.OutOfMemoryError: CUDA out of memory.",
                            MemoryKnob::mem_fraction};
  const std::string answers =
      notify_group("k26-ar", three_nodes(), 1, stop, 1'700'000'000'000'000, runner);
  EXPECT_EQ(answers,
            "rank 0 (node-a): restart with the group: restart after 10s; rank 2 (node-c): not "
            "told: ssh could not reach it (exit 255): ssh: connect to host node-c: No route");
  ASSERT_EQ(runner.commands.size(), 2U);
  EXPECT_EQ(runner.commands[0],
            "node-a: -i PATH=/usr/sbin:/usr/bin:/sbin:/bin /usr/bin/gpulaunch peer-failed "
            "--profile=k26-ar --from-rank=1 --from-host=node-b --class=cuda-oom "
            "--at=1700000000000000 --evidence=torch.OutOfMemoryError: CUDA out of memory. "
            "--knob=mem-fraction");
}

TEST(PeerNotice, TheRemoteProgramIsEnvSoRootsHelperStartsClean) {
  EXPECT_EQ(notice_nodes(three_nodes()).gpulaunch, "/usr/bin/env");
  EXPECT_THAT(notice_nodes(three_nodes()).hosts, ElementsAre("node-a", "node-b", "node-c"));
}

}  // namespace
}  // namespace gl
