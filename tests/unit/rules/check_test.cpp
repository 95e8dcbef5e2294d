// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/check.hpp"

namespace gl {
namespace {

ToolkitFact toolkit(const std::string& root, const std::string& version) {
  ToolkitFact fact;
  fact.root = fact.resolved_root = root;
  fact.nvcc = root + "/bin/nvcc";
  fact.root_exists = fact.nvcc_exists = true;
  fact.nvcc_version = version;
  return fact;
}

Facts blackwell_node() {
  Facts facts;
  facts.driver = {true, "nvml", "580.95.05", "13.0", {}};
  facts.gpus.push_back({0, "NVIDIA RTX PRO 6000", "GPU-0", 12, 0, 97887});
  facts.toolkits = {toolkit("/usr/local/cuda-13.0", "13.0"), toolkit("/opt/cuda-12.6", "12.6")};
  return facts;
}

// The check as `check` and `up` run it: on the profile's own launch plan.
std::vector<Finding> check(const Profile& profile, const Facts& facts) {
  return evaluate(profile, make_launch_plan(profile), facts, ShellEnvironment{});
}

std::vector<std::string> codes(const std::vector<Finding>& findings) {
  std::vector<std::string> list;
  for (const auto& finding : findings) list.push_back(finding.code);
  return list;
}

// Validation refuses [env] CUDA_HOME, but `up` may hand over a profile built another way: the
// rule checks what the unit's environment really resolves to.
TEST(Check, UnitEnvironmentThatBypassesTheProfileToolkitIsAnError) {
  Profile profile;
  profile.name = "t";
  profile.engine.kind = EngineKind::command;
  profile.engine.argv = {"/bin/true"};
  profile.toolkit.cuda_home = "/usr/local/cuda-13.0";
  profile.service.user = "gpulaunch";
  profile.env["CUDA_HOME"] = "/opt/cuda-12.6";
  auto findings = check(profile, blackwell_node());
  EXPECT_THAT(codes(findings),
              ::testing::ElementsAre("jit-toolkit-mismatch", "toolkit-too-old-for-arch"));
  EXPECT_TRUE(has_errors(findings));
}

TEST(Check, PinnedHealthyToolkitHasNoFindings) {
  Profile profile;
  profile.name = "t";
  profile.engine.kind = EngineKind::command;
  profile.engine.argv = {"/bin/true"};
  profile.toolkit.cuda_home = "/usr/local/cuda-13.0";
  profile.service.user = "gpulaunch";
  auto findings = check(profile, blackwell_node());
  EXPECT_THAT(codes(findings), ::testing::IsEmpty());
  EXPECT_FALSE(has_errors(findings));
}

Profile pinned_profile() {
  Profile profile;
  profile.name = "t";
  profile.engine.kind = EngineKind::command;
  profile.engine.argv = {"/bin/true"};
  profile.toolkit.cuda_home = "/usr/local/cuda-13.0";
  return profile;
}

const Finding* find_code(const std::vector<Finding>& findings, const std::string& code) {
  for (const auto& finding : findings)
    if (finding.code == code) return &finding;
  return nullptr;
}

TEST(Check, OnlyAnExplicitRootServiceUserIsWarned) {
  auto profile = pinned_profile();
  profile.service.user = "root";
  auto findings = check(profile, blackwell_node());
  EXPECT_THAT(codes(findings), ::testing::ElementsAre("engine-runs-as-root"));
  EXPECT_FALSE(has_errors(findings));  // a warning: it does not block a start
  const Finding* finding = find_code(findings, "engine-runs-as-root");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::warning);
  EXPECT_EQ(finding->fix,
            "remove service.user: the engine then runs as its own system user gpulaunch-t, which "
            "`up` creates");
  // Unset, the unit runs as the profile's own user (profile/service_user): nothing to warn.
  profile.service.user.reset();
  EXPECT_THAT(codes(check(profile, blackwell_node())), ::testing::IsEmpty());
}

TEST(Check, GpulaunchFromAUserWritableBuildTreeIsWarned) {
  auto profile = pinned_profile();
  profile.service.user = "gpulaunch";
  auto facts = blackwell_node();
  facts.root_programs = {ProgramFact{"/home/dev/gpulaunch/build/src/gpulaunch",
                                     "'/home/dev' is owned by uid 1000 (mode 0755)"}};
  auto findings = check(profile, facts);
  EXPECT_THAT(codes(findings), ::testing::ElementsAre("gpulaunch-binary-user-writable"));
  const Finding* finding = find_code(findings, "gpulaunch-binary-user-writable");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::warning);
  EXPECT_THAT(finding->summary, ::testing::HasSubstr("/home/dev/gpulaunch/build/src/gpulaunch"));
  EXPECT_THAT(finding->facts, ::testing::Contains(::testing::Pair(
                                  "writable", "'/home/dev' is owned by uid 1000 (mode 0755)")));

  facts.root_programs[0].user_writable.reset();  // installed root-owned: nothing to say
  EXPECT_THAT(codes(check(profile, facts)), ::testing::IsEmpty());
}

// A gpulaunch copied alone: the unit's ExecStartPost= would find nothing to run, and no start
// would ever reach the history.
TEST(Check, MissingRecordStartProgramIsWarned) {
  auto profile = pinned_profile();
  profile.service.user = "gpulaunch";
  auto facts = blackwell_node();
  facts.root_programs = {ProgramFact{"/usr/local/bin/gpulaunch", std::nullopt, true},
                         ProgramFact{"/usr/local/bin/gpulaunch-record-start", std::nullopt, false}};
  auto findings = check(profile, facts);
  EXPECT_THAT(codes(findings), ::testing::ElementsAre("gpulaunch-program-missing"));
  EXPECT_EQ(findings[0].summary,
            "the unit would run '/usr/local/bin/gpulaunch-record-start' as root (ExecStartPost=), "
            "and it is not an executable file");
}

// Architectures from the catalog decide only for GPUs the catalog knows; a list nvcc printed
// decides for every GPU.
TEST(Check, CatalogListDoesNotCondemnAnArchitectureItDoesNotKnow) {
  auto profile = pinned_profile();
  profile.service.user = "gpulaunch";
  auto facts = blackwell_node();
  facts.gpus[0].cc_major = 14;
  facts.gpus[0].cc_minor = 0;
  facts.toolkits[0].archs = std::vector<int>{75, 80, 90, 100, 120};
  facts.toolkits[0].archs_source = "catalog for CUDA 13.0";
  EXPECT_THAT(codes(check(profile, facts)), ::testing::IsEmpty());
  facts.toolkits[0].archs_source = "nvcc --list-gpu-arch";
  EXPECT_THAT(codes(check(profile, facts)), ::testing::Contains("toolkit-too-old-for-arch"));
}

// vLLM replicates the tp x pp group dp times: two replicas of one GPU need two GPUs, and the
// finding says where the second comes from.
TEST(Check, GpusNeededCountDataParallelReplicas) {
  auto profile = pinned_profile();
  profile.service.user = "gpulaunch";
  profile.engine.kind = EngineKind::vllm;
  profile.parallelism.dp = 2;
  const auto findings = check(profile, blackwell_node());
  const Finding* finding = find_code(findings, "gpu-count-short");
  ASSERT_NE(finding, nullptr) << ::testing::PrintToString(codes(findings));
  EXPECT_EQ(finding->summary,
            "the profile needs 2 GPUs per node (tp 1 x pp 1 x dp 2), 1 available");
  // SGLang's dp-attention splits the same GPUs instead.
  profile.engine.kind = EngineKind::sglang;
  profile.parallelism.dp_attention = true;
  EXPECT_EQ(find_code(check(profile, blackwell_node()), "gpu-count-short"), nullptr);
}

// flashinfer/jit/env.py tests os.getenv's truthiness: any non-empty value, "0" too, skips the
// kernel packages' version check; FLASHINFER_CUBIN_DIR makes FlashInfer skip flashinfer-cubin.
TEST(Check, FlashInferVersionCheckSwitchesFollowFlashInfer) {
  Profile profile = pinned_profile();
  profile.service.user = "gpulaunch";
  Facts facts = blackwell_node();
  facts.python = PythonEnvFact{};
  facts.python->prefix = "/opt/venv";
  facts.python->torch_cuda = "13.0";
  facts.python->packages = {{"flashinfer", "0.6.18"}, {"flashinfer_cubin", "0.6.17"}};
  EXPECT_TRUE(find_code(check(profile, facts), "flashinfer-packages-mismatch"));
  profile.env["FLASHINFER_DISABLE_VERSION_CHECK"] = "0";
  EXPECT_FALSE(find_code(check(profile, facts), "flashinfer-packages-mismatch"));
  profile.env.erase("FLASHINFER_DISABLE_VERSION_CHECK");
  profile.env["FLASHINFER_CUBIN_DIR"] = "/var/cache/cubins";
  EXPECT_FALSE(find_code(check(profile, facts), "flashinfer-packages-mismatch"));
  facts.python->packages = {{"flashinfer", "0.0.0+unknown"}, {"flashinfer_jit_cache", "0.6.17"}};
  EXPECT_FALSE(find_code(check(profile, facts), "flashinfer-packages-mismatch"));
}

Profile vllm_two_nodes() {
  Profile profile;
  profile.name = "t";
  profile.engine.kind = EngineKind::vllm;
  profile.engine.venv = "/opt/venv";
  profile.model.path = "org/model";
  profile.toolkit.cuda_home = "/usr/local/cuda-13.0";
  profile.service.user = "gpulaunch";
  profile.parallelism.nodes = 2;
  profile.parallelism.dist_init_addr = "10.0.0.1:5000";
  return profile;
}

Facts with_vllm(const std::optional<std::string>& version) {
  Facts facts = blackwell_node();
  facts.python = PythonEnvFact{};
  facts.python->prefix = "/opt/venv";
  facts.python->torch_cuda = "13.0";
  if (version) facts.python->packages = {{"vllm", *version}};
  return facts;
}

// vLLM's own multi-node rendezvous (--nnodes ...) came with 0.11.1: an older vLLM would exit
// "unrecognized arguments" at every start, so check refuses it and names the release needed.
TEST(Check, VllmMultiNodeOnAReleaseWithoutItsFlagsIsRefused) {
  const Profile profile = vllm_two_nodes();
  auto findings = check(profile, with_vllm("0.10.2"));
  const Finding* refused = find_code(findings, "engine-flag-too-new");
  ASSERT_TRUE(refused) << ::testing::PrintToString(codes(findings));
  EXPECT_EQ(refused->severity, Severity::error);
  EXPECT_EQ(refused->summary,
            "vLLM 0.10.2 has no --nnodes, --node-rank, --master-addr, --master-port, which this "
            "profile needs (from 0.11.1 on)");
  EXPECT_FALSE(find_code(check(profile, with_vllm("0.11.1")), "engine-flag-too-new"));
  EXPECT_FALSE(find_code(check(profile, with_vllm("0.11.1")), "engine-version-unknown"));
  // Unknown: the flags as they are, and check says what it assumed.
  auto unknown = check(profile, with_vllm(std::nullopt));
  EXPECT_FALSE(find_code(unknown, "engine-flag-too-new"));
  const Finding* assumed = find_code(unknown, "engine-version-unknown");
  ASSERT_TRUE(assumed);
  EXPECT_EQ(assumed->severity, Severity::info);
  EXPECT_THAT(assumed->summary, ::testing::HasSubstr("--nnodes (since 0.11.1)"));
}

// vLLM's data-parallel multi-node flags and --headless came with 0.9.0 (catalog/engines,
// FlagVersions, read without them in 0.8.4): an older release is refused with the reason, one
// between the releases read (0.8.5) is warned, never refused.
TEST(Check, VllmDataParallelGroupNeedsTheReleaseWithItsFlags) {
  Profile profile = vllm_two_nodes();
  profile.parallelism.dp = 2;
  auto old = check(profile, with_vllm("0.8.4"));
  const Finding* refused = find_code(old, "engine-flag-too-new");
  ASSERT_TRUE(refused) << ::testing::PrintToString(codes(old));
  EXPECT_THAT(refused->summary, ::testing::HasSubstr("--data-parallel-address"));
  EXPECT_THAT(refused->summary, ::testing::EndsWith("(from 0.9.0 on)"));
  EXPECT_EQ(find_code(old, "engine-flag-unverified"), nullptr);

  auto between = check(profile, with_vllm("0.8.5"));
  const Finding* unverified = find_code(between, "engine-flag-unverified");
  ASSERT_TRUE(unverified) << ::testing::PrintToString(codes(between));
  EXPECT_EQ(unverified->severity, Severity::warning);
  EXPECT_THAT(unverified->summary,
              ::testing::MatchesRegex("vLLM 0.8.5 falls between the releases read for "
                                      "--(headless|data-parallel-[a-z-]+): 0\\.8\\.4 lacks it, "
                                      "0\\.9\\.0 has it.*"));
  EXPECT_THAT(unverified->fix, ::testing::HasSubstr("upgrade vllm in engine.venv to 0.9.0"));

  auto current = check(profile, with_vllm("0.11.1"));
  EXPECT_EQ(find_code(current, "engine-flag-too-new"), nullptr);
  EXPECT_EQ(find_code(current, "engine-flag-unverified"), nullptr);
}

// `check NAME` where NAME serves: the port its own processes alone hold (rules/service_view) is
// no conflict; the same port held by anything else is.
TEST(Check, TheServicesOwnPortIsNoConflict) {
  Profile profile = pinned_profile();
  profile.service.user = "gpulaunch";
  Facts facts = blackwell_node();
  facts.ports.push_back(PortFact{"0.0.0.0", profile.server.port, true, std::nullopt, std::nullopt});
  const auto findings = check(profile, facts);  // find_code points into it
  const Finding* taken = find_code(findings, "port-taken");
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->severity, Severity::error);
  facts.ports.back().held_by_service = "gpulaunch-t.service (PID 4712)";
  EXPECT_EQ(find_code(check(profile, facts), "port-taken"), nullptr);
}

// A GPU fallen off the bus is named as lost with the reboot fix, never as too few GPUs for tp.
TEST(Check, ALostGpuIsNamedAsLostNotAsTooFewGpus) {
  Profile profile = pinned_profile();
  profile.service.user = "gpulaunch";
  profile.parallelism.tp = 2;
  profile.engine.kind = EngineKind::sglang;
  profile.engine.venv = "/opt/venv";
  profile.model.path = "org/model";
  Facts facts = blackwell_node();
  facts.driver.lost_gpus = {"GPU 1"};
  auto findings = check(profile, facts);
  const Finding* lost = find_code(findings, "gpu-lost");
  ASSERT_TRUE(lost) << ::testing::PrintToString(codes(findings));
  EXPECT_EQ(lost->severity, Severity::error);
  EXPECT_EQ(lost->summary, "GPU 1 fell off the bus: the driver cannot reach it (GPU is lost)");
  EXPECT_THAT(lost->fix, ::testing::StartsWith("reboot the node"));
  EXPECT_FALSE(find_code(findings, "gpu-count-short"));

  // nvmlInit_v2 itself answers NVML_ERROR_GPU_IS_LOST: no "no driver" either.
  Facts init_lost;
  init_lost.driver.nvml_error = 15;
  auto at_init = check(profile, init_lost);
  EXPECT_TRUE(find_code(at_init, "gpu-lost"));
  EXPECT_FALSE(find_code(at_init, "no-nvidia-driver"));
}

// A keyed engine whose key gpulaunch may not send: `check` says the probe is not sent and which
// liveness signal remains; a key in [secrets] leaves nothing to say.
TEST(Check, SaysWhichLivenessSignalRemainsWhenTheKeyCannotBeSent) {
  Profile vllm;
  vllm.name = "t";
  vllm.engine.kind = EngineKind::vllm;
  vllm.engine.venv = "/opt/venv";
  vllm.model.path = "/m";
  vllm.toolkit.cuda_home = "/usr/local/cuda-13.0";
  vllm.server.liveness = LivenessMode::generate;
  vllm.engine.args = {"--api_key", "s3cret"};
  const auto keyed_findings = check(vllm, blackwell_node());
  const Finding* keyed = find_code(keyed_findings, "liveness-key-unusable");
  ASSERT_NE(keyed, nullptr);
  EXPECT_EQ(keyed->severity, Severity::info);
  EXPECT_THAT(keyed->summary, ::testing::HasSubstr("liveness sends no probe to vLLM"));
  EXPECT_THAT(keyed->summary, ::testing::HasSubstr("--api_key in the engine's command line"));
  EXPECT_THAT(keyed->facts,
              ::testing::Contains(::testing::Pair("signal left",
                                                  "metrics: vllm:num_requests_running and "
                                                  "vllm:generation_tokens_total from /metrics")));
  vllm.engine.args.clear();
  vllm.secrets["VLLM_API_KEY"] = "/etc/gpulaunch/secrets/vllm";
  EXPECT_EQ(find_code(check(vllm, blackwell_node()), "liveness-key-unusable"), nullptr);

  // llama.cpp's key guards its metrics too: nothing but health is left, a warning.
  Profile llama;
  llama.name = "t";
  llama.engine.kind = EngineKind::llamacpp;
  llama.engine.executable = "/opt/llama.cpp/bin/llama-server";
  llama.model.path = "/m.gguf";
  llama.server.liveness = LivenessMode::generate;
  llama.env["LLAMA_API_KEY"] = "s3cret";
  const auto bare_findings = check(llama, blackwell_node());
  const Finding* bare = find_code(bare_findings, "liveness-key-unusable");
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(bare->severity, Severity::warning);
  EXPECT_THAT(bare->summary,
              ::testing::HasSubstr("liveness sends no probe and no metrics read to llama-server"));
  EXPECT_THAT(bare->summary, ::testing::HasSubstr("LLAMA_API_KEY in [env]"));
}

// engine.args naming trtllm-serve's options file: gpulaunch passes none of its own, so `check`
// says what that file must hold for liveness to count iterations.
TEST(Check, SaysWhatTheUsersTrtllmOptionsFileMustHold) {
  Profile trt;
  trt.name = "t";
  trt.engine.kind = EngineKind::trtllm;
  trt.engine.venv = "/opt/venv";
  trt.model.path = "/m";
  trt.toolkit.cuda_home = "/usr/local/cuda-13.0";
  trt.server.liveness = LivenessMode::generate;
  EXPECT_EQ(find_code(check(trt, blackwell_node()), "liveness-options-file"), nullptr);
  trt.engine.args = {"--config", "/etc/trt.yaml"};
  const auto findings = check(trt, blackwell_node());
  const Finding* found = find_code(findings, "liveness-options-file");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->severity, Severity::info);
  EXPECT_EQ(found->summary,
            "trtllm-serve reads its options from '/etc/trt.yaml': liveness counts its iterations "
            "only where that file holds 'enable_iter_perf_stats: true'");
  EXPECT_EQ(found->fix,
            "add the line 'enable_iter_perf_stats: true' to '/etc/trt.yaml', or drop "
            "--extra_llm_api_options from engine.args and gpulaunch passes a file of its own");
}

}  // namespace
}  // namespace gl
