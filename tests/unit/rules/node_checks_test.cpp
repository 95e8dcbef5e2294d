// SPDX-License-Identifier: Apache-2.0
// The node preflight's OS-side rules on facts written here: the shipped examples on the seed's
// node, and how the unit's device policy is read back.

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "profile/validate.hpp"
#include "rules/node_checks.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

constexpr std::string_view kKimiPath = "/models/moonshotai/Kimi-K2.6";

// The seed's node: 8 x RTX PRO 6000 Blackwell (96 GB, as NVML reports it), Kimi K2.6 on disk
// (INT4, about 600 GB; 61 layers of MLA with a 512-wide latent and 64 rope dims, 256K context).
Facts seed_node() {
  Facts facts;
  for (int i = 0; i < 8; ++i)
    facts.gpus.push_back({i, "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                          "GPU-" + std::to_string(i), 12, 0, 97887});
  ModelFact model;
  model.path = std::string(kKimiPath);
  model.weights_bytes = 594'000'000'000ULL;
  model.weights_source = "model.safetensors.index.json metadata.total_size";
  model.layers = 61;
  model.kv_heads = 64;
  model.head_dim = 112;
  model.kv_lora_rank = 512;
  model.rope_head_dim = 64;
  model.context = 262144;
  facts.model = model;
  return facts;
}

std::vector<std::string> codes(const std::vector<Finding>& findings) {
  std::vector<std::string> list;
  for (const auto& finding : findings) list.push_back(finding.code);
  return list;
}

std::vector<Finding> node_findings(const Profile& profile, const Facts& facts) {
  std::vector<Finding> findings;
  check_node_os(profile, make_launch_plan(profile), facts, findings);
  return findings;
}

Profile example(const std::string& name) {
  auto profile = load_profile(DirectorySource({fs::path(GL_SOURCE_DIR) / "profiles"}), name);
  EXPECT_TRUE(profile) << (profile ? "" : profile.error().message);
  return profile ? *profile : Profile{};
}

// Every example whose model is Kimi K2.6 fits the seed's eight GPUs; the hub model is a note.
TEST(ModelFit, ShippedExamplesFitTheSeedNode) {
  for (const auto& entry : fs::directory_iterator(fs::path(GL_SOURCE_DIR) / "profiles")) {
    if (entry.path().extension() != ".toml") continue;
    const Profile profile = example(entry.path().stem().string());
    Facts facts = seed_node();
    if (profile.model.path != kKimiPath) facts.model.reset();
    auto findings = node_findings(profile, facts);
    SCOPED_TRACE(profile.name);
    EXPECT_THAT(codes(findings), ::testing::Not(::testing::Contains("model-does-not-fit")));
    EXPECT_FALSE(has_errors(findings));
  }
}

// k26-ep4 as it shipped before: tp 4 on GPUs 0-3, half the memory the weights need.
TEST(ModelFit, KimiOnFourGpusDoesNotFitAndSaysHowManyItNeeds) {
  Profile profile = example("k26-ep4");
  profile.parallelism.tp = 4;
  profile.gpus.devices = {"0", "1", "2", "3"};
  auto findings = node_findings(profile, seed_node());
  ASSERT_THAT(codes(findings), ::testing::ElementsAre("model-does-not-fit"));
  const Finding& finding = findings.front();
  EXPECT_EQ(finding.severity, Severity::error);
  EXPECT_EQ(finding.summary,
            "the model needs 612.4 GB (594.0 GB of weights, KV cache 18.4 GB for one request of "
            "262144 tokens (69 KiB a token)) but 4 x 97887 MiB x 0.85 gives 349.0 GB");
  EXPECT_THAT(finding.fix, ::testing::StartsWith("spread it over at least 8 GPUs"));
  EXPECT_THAT(finding.fix, ::testing::EndsWith("(--context-length in engine.args)"));
}

// A shorter context in engine.args shrinks the KV budget the rule counts.
TEST(ModelFit, ContextFlagInEngineArgsIsTheContextCounted) {
  Profile profile = example("k26-ar");
  profile.engine.knobs["engine.mem_fraction"] = 0.78;  // 8 x 97887 MiB x 0.78 = 640.5 GB
  EXPECT_THAT(codes(node_findings(profile, seed_node())), ::testing::IsEmpty());
  profile.engine.knobs["engine.mem_fraction"] =
      0.74;  // 607.6 GB: the weights fit, 256K of KV does not
  EXPECT_THAT(codes(node_findings(profile, seed_node())),
              ::testing::ElementsAre("model-context-capped"));
  profile.engine.args.push_back("--context-length=32768");
  EXPECT_THAT(codes(node_findings(profile, seed_node())), ::testing::IsEmpty());
}

// The weights fit and one full-length request's KV cache does not: SGLang caps its requests to
// the pool and serves (tp_worker.py max_req_len), a warning; vLLM refuses to start
// (check_enough_kv_cache_memory), an error. Weights that do not fit stop both.
TEST(ModelFit, AKvCacheShortfallFollowsEachEngine) {
  Profile sglang = example("k26-ar");
  sglang.engine.knobs["engine.mem_fraction"] = 0.74;
  auto capped = node_findings(sglang, seed_node());
  ASSERT_THAT(codes(capped), ::testing::ElementsAre("model-context-capped"));
  EXPECT_EQ(capped.front().severity, Severity::warning);
  EXPECT_EQ(capped.front().summary,
            "one request of 262144 tokens needs a KV cache of 18.4 GB, but 13.6 GB is left beside "
            "the weights: SGLang serves requests of about 194108 tokens at most");

  Profile vllm = sglang;
  vllm.engine.kind = EngineKind::vllm;
  auto refused = node_findings(vllm, seed_node());
  ASSERT_THAT(codes(refused), ::testing::ElementsAre("model-does-not-fit"));
  EXPECT_EQ(refused.front().severity, Severity::error);

  sglang.engine.knobs["engine.mem_fraction"] = 0.6;  // 492.5 GB: not even the weights
  EXPECT_THAT(codes(node_findings(sglang, seed_node())),
              ::testing::ElementsAre("model-does-not-fit"));
}

Facts infiniband_node() {
  Facts facts = seed_node();
  facts.model.reset();
  InfinibandFact ib;
  ib.devices = {"mlx5_0"};
  ib.modules_read = true;
  ib.peer_memory = {"nvidia_peermem (/proc/modules)"};
  facts.infiniband = ib;
  return facts;
}

// systemd's own reading of the unit: an empty DeviceAllow= empties the list before it.
TEST(InfinibandDevices, AnEmptyDeviceAllowInExtraHidesThemOnAMultiNodeProfile) {
  Profile profile = example("k26-ar");
  profile.parallelism.nodes = 2;
  profile.parallelism.tp = 16;
  profile.parallelism.dist_init_addr = "10.0.0.1:5000";
  profile.service.extra = {"DeviceAllow=", "DeviceAllow=char-nvidia* rw",
                           "DeviceAllow=char-nvidia-uvm rw"};
  auto findings = node_findings(profile, infiniband_node());
  ASSERT_THAT(codes(findings), ::testing::ElementsAre("infiniband-devices-hidden"));
  EXPECT_EQ(findings.front().severity, Severity::error);
  EXPECT_EQ(findings.front().summary,
            "the unit hides /dev/infiniband from the engine (DevicePolicy=closed without "
            "char-infiniband_verbs): NCCL cannot open the InfiniBand devices (mlx5_0) and falls "
            "back to TCP sockets");
  // A glob that covers the verbs group is enough.
  profile.service.extra.push_back("DeviceAllow=char-infiniband* rw");
  EXPECT_THAT(codes(node_findings(profile, infiniband_node())), ::testing::IsEmpty());
}

TEST(InfinibandDevices, NoInfinibandNoFinding) {
  Profile profile = example("k26-ar");
  profile.service.extra = {"PrivateDevices=yes", "LimitMEMLOCK=64K"};
  Facts facts = infiniband_node();
  facts.infiniband->devices.clear();
  EXPECT_THAT(codes(node_findings(profile, facts)), ::testing::IsEmpty());
}

Profile two_node_profile() {
  Profile profile = example("k26-ar");
  profile.parallelism.nodes = 2;
  profile.parallelism.tp = 16;
  profile.parallelism.dist_init_addr = "10.0.0.1:5000";
  return profile;
}

TEST(RendezvousRoute, ANodeWithoutARouteToRankZeroCannotJoin) {
  Facts facts = seed_node();
  facts.rendezvous_route = RouteFact{"10.0.0.1", "", "No route to '10.0.0.1' in /proc/net/route"};
  auto findings = node_findings(two_node_profile(), facts);
  ASSERT_THAT(codes(findings), ::testing::ElementsAre("rendezvous-unroutable"));
  EXPECT_EQ(findings.front().severity, Severity::error);
  EXPECT_EQ(findings.front().summary,
            "this node has no route to the group's rendezvous host 10.0.0.1: it cannot join the "
            "group, and the other ranks wait until their collective times out");
  facts.rendezvous_route->interface = "ens1f1";
  EXPECT_THAT(codes(node_findings(two_node_profile(), facts)), ::testing::IsEmpty());
}

TEST(RendezvousRoute, AnInterfaceTheProfilePinsElsewhereIsAWarningAPrefixIsNot) {
  Facts facts = seed_node();
  facts.rendezvous_route = RouteFact{"10.0.0.1", "ens1f1", ""};
  Profile profile = two_node_profile();
  profile.env["NCCL_SOCKET_IFNAME"] = "eth0";
  auto findings = node_findings(profile, facts);
  ASSERT_THAT(codes(findings), ::testing::ElementsAre("socket-interface-not-routed"));
  EXPECT_EQ(findings.front().fix,
            "remove NCCL_SOCKET_IFNAME from [env] (gpulaunch then sets ens1f1), or set it to "
            "ens1f1");
  profile.env["NCCL_SOCKET_IFNAME"] = "ens1";  // NCCL's prefix match
  EXPECT_THAT(codes(node_findings(profile, facts)), ::testing::IsEmpty());
  profile.env["NCCL_SOCKET_IFNAME"] = "^docker,lo";
  EXPECT_THAT(codes(node_findings(profile, facts)), ::testing::IsEmpty());
}

// Two installed profiles under one uid: only where both say so (service.share_user).
TEST(SharedServiceUser, TwoProfilesSilentlySharingAUserIsAnError) {
  Profile profile;
  profile.name = "a";
  profile.engine.kind = EngineKind::command;
  profile.engine.argv = {"/bin/true"};
  profile.service.user = "llm";
  Facts facts;
  InstalledProfileFact other;
  other.name = "b";
  other.snapshot = "/var/lib/gpulaunch/snapshots/b.toml";
  other.user = "llm";
  facts.installed_profiles = std::vector<InstalledProfileFact>{other};

  auto findings = node_findings(profile, facts);
  ASSERT_THAT(codes(findings), ::testing::ElementsAre("service-user-shared"));
  EXPECT_EQ(findings[0].severity, Severity::error);
  EXPECT_EQ(findings[0].summary,
            "profile 'b' is installed and runs as the same user 'llm', and not both set "
            "service.share_user = true");
  profile.service.share_user = true;  // one side alone is not enough
  EXPECT_THAT(codes(node_findings(profile, facts)), ::testing::ElementsAre("service-user-shared"));
  facts.installed_profiles->front().share_user = true;
  EXPECT_THAT(codes(node_findings(profile, facts)), ::testing::IsEmpty());

  // Without service.user each runs as its own gpulaunch-NAME: nothing shared.
  profile.service = {};
  facts.installed_profiles->front() = other;
  facts.installed_profiles->front().user = "gpulaunch-b";
  EXPECT_THAT(codes(node_findings(profile, facts)), ::testing::IsEmpty());
  // The example profiles no longer share one.
  EXPECT_NE(example("k26-ar").service.user, std::optional<std::string>("gpulaunch"));
}

}  // namespace
}  // namespace gl
