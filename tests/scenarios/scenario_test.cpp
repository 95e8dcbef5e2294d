// SPDX-License-Identifier: Apache-2.0
// Every scenario of the corpus through the real code paths: fixture node under --root, fake
// NVML through LD_LIBRARY_PATH, fake nvcc/nvidia-smi scripts, gather -> JSON -> evaluate.

#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "facts/gather.hpp"
#include "fakes/systemd/fake_manager.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "rules/service_view.hpp"
#include "scenarios/scenario.hpp"
#include "support/listener.hpp"

namespace gl::test {
namespace {

std::vector<std::string> codes_of(const std::vector<Finding>& findings) {
  std::vector<std::string> codes;
  for (const auto& finding : findings) codes.push_back(finding.code);
  return codes;
}

std::string describe(const std::vector<Finding>& findings) {
  std::string text;
  for (const auto& finding : findings)
    text += "  " + finding.code + ": " + finding.summary + "\n    fix: " + finding.fix + "\n";
  return text;
}

// Gathers the facts in a child with a private mount namespace in which a tmpfs of `bytes` lies
// over the fixture's /dev/shm, so the probe's statvfs reads that size (an unprivileged user gets
// the namespace through a user namespace). nullopt when this machine allows neither.
std::optional<Facts> gather_with_shm(const NodeFs& node, const FactsRequest& request,
                                     unsigned long long bytes, const std::filesystem::path& out) {
  const pid_t child = ::fork();
  if (child < 0) return std::nullopt;
  if (child == 0) {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    int flags = CLONE_NEWNS | (uid == 0 ? 0 : CLONE_NEWUSER);
    if (::unshare(flags) != 0) ::_exit(77);
    if (uid != 0) {
      std::ofstream("/proc/self/setgroups") << "deny";
      std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
      std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
    }
    // Nothing mounted here may reach the host's namespace.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(77);
    const std::string shm = (node.root() / "dev/shm").string();
    const std::string size = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", shm.c_str(), "tmpfs", 0, size.c_str()) != 0) ::_exit(77);
    std::ofstream(out) << facts_to_json(gather_facts(node, request)).dump();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto facts = parse_facts(text, out.string());
  if (!facts) return std::nullopt;
  return *facts;
}

struct Checked {
  bool skipped = false;  // the machine cannot mount the scenario's /dev/shm
  Facts facts;
  std::vector<Finding> findings;
  std::vector<Finding> from_json;
};

Checked check_scenario(const Scenario& scenario) {
  FixtureNode node;
  std::optional<Listener> listener;
  if (scenario.port_taken) listener.emplace();
  auto path = build_scenario(scenario, node, listener ? listener->port() : 30000);
  auto profile = load_profile(DirectorySource({}), path);
  EXPECT_TRUE(profile) << (profile ? "" : profile.error().message);
  if (!profile) return {};
  ShellEnvironment shell{scenario.shell};
  const LaunchPlan plan = make_launch_plan(*profile);
  auto request = facts_request(*profile, plan, shell);
  request.probe_ports = scenario.port_taken;
  request.probe_cache = node.scratch() / "probe-cache.json";  // never the host's
  request.host = scenario_host(scenario);
  Checked checked;
  if (scenario.shm_bytes) {
    auto facts = gather_with_shm(NodeFs(node.root()), request, *scenario.shm_bytes,
                                 node.scratch() / "facts.json");
    if (!facts) return Checked{true, {}, {}, {}};
    checked.facts = std::move(*facts);
  } else {
    checked.facts = gather_facts(NodeFs(node.root()), request);
  }
  if (scenario.port_holder != Scenario::PortHolder::unknown) {
    // The node's /proc as the kernel writes it: the listener on the profile's port (inode 51234),
    // held by the service's engine, and by another unit's process where the scenario says so.
    node.write("/proc/net/tcp",
               fmt::format("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
                           "retrnsmt   uid  timeout inode\n"
                           "   0: 00000000:{:04X} 00000000:0000 0A 00000000:00000000 "
                           "00:00000000 00000000   997        0 51234 1 0 100 0 0 10 0\n",
                           listener->port()));
    auto process = [&](int pid, const std::string& cgroup) {
      node.write("/proc/" + std::to_string(pid) + "/cgroup", "0::" + cgroup + "\n");
      node.symlink("/proc/" + std::to_string(pid) + "/fd/7", "socket:[51234]");
    };
    const std::string unit = profile->unit_name();
    process(4712, "/system.slice/" + unit);
    node.write("/proc/4711/cgroup", "0::/system.slice/" + unit + "\n");
    if (scenario.port_holder == Scenario::PortHolder::own_service_and_other)
      process(6000, "/system.slice/other.service");
    testing::FakeManager manager;
    manager.add_unit(unit, "active").main_pid = 4711;
    see_as_service(checked.facts, manager, NodeFs(node.root()), unit);
  }
  checked.findings = evaluate(*profile, plan, checked.facts, shell);
  auto reread = parse_facts(facts_to_json(checked.facts).dump(), "round trip");
  EXPECT_TRUE(reread);
  if (reread) checked.from_json = evaluate(*profile, plan, *reread, shell);
  return checked;
}

class CorpusTest : public ::testing::TestWithParam<Scenario> {};

TEST_P(CorpusTest, ReportsExactlyTheExpectedCodes) {
  const auto& scenario = GetParam();
  auto checked = check_scenario(scenario);
  if (checked.skipped) GTEST_SKIP() << "no mount namespace here for the scenario's /dev/shm";
  EXPECT_THAT(codes_of(checked.findings), ::testing::UnorderedElementsAreArray(scenario.expected))
      << describe(checked.findings);
  // Facts recorded on one node check the same on another.
  EXPECT_EQ(codes_of(checked.from_json), codes_of(checked.findings));
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CorpusTest, ::testing::ValuesIn(scenarios()),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return name;
                         });

TEST(Corpus, SeedFirstAndEnoughOfEachKind) {
  const auto& list = scenarios();
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list.front().name, "seed-sm120-distro-nvcc-12.8");
  size_t healthy = 0;
  size_t broken = 0;
  for (const auto& scenario : list) ++(scenario.expected.empty() ? healthy : broken);
  EXPECT_GE(broken, 20u);
  EXPECT_GE(healthy, 5u);
}

TEST(Corpus, HealthyScenariosHaveNoErrors) {
  for (const auto& scenario : scenarios()) {
    if (scenario.name.rfind("healthy", 0) != 0 && scenario.name != "seed-fixed-cuda-home-pinned")
      continue;
    EXPECT_FALSE(has_errors(check_scenario(scenario).findings)) << scenario.name;
  }
}

TEST(Seed, ErrorNamesArchNvccPathRuleAndPinnedFix) {
  auto checked = check_scenario(scenario_named("seed-sm120-distro-nvcc-12.8"));
  auto finding = std::find_if(checked.findings.begin(), checked.findings.end(),
                              [](const Finding& f) { return f.code == "flashinfer-nvcc-too-old"; });
  ASSERT_NE(finding, checked.findings.end()) << describe(checked.findings);
  EXPECT_EQ(finding->severity, Severity::error);
  EXPECT_EQ(finding->summary,
            "FlashInfer 0.6.7 refuses compute capability 12.0 with nvcc 12.8 at /usr/bin/nvcc: its "
            "JIT ends up with no target architecture and the server dies with \"FlashInfer "
            "requires GPUs with sm75 or higher\"");
  EXPECT_THAT(finding->rule,
              ::testing::StartsWith("FlashInfer >= 0.6.7 with a 12.x GPU needs nvcc >= 12.9"));
  EXPECT_THAT(finding->fix, ::testing::StartsWith("toolkit.cuda_home = \"/usr/local/cuda-13.0\""));
  EXPECT_TRUE(has_errors(checked.findings));
}

TEST(Seed, ToolkitsFoundEverywhereAProcessLooks) {
  auto checked = check_scenario(scenario_named("seed-with-cuda-symlink"));
  std::vector<std::string> roots;
  for (const auto& toolkit : checked.facts.toolkits) roots.push_back(toolkit.root);
  EXPECT_THAT(roots,
              ::testing::UnorderedElementsAre("/usr", "/usr/local/cuda", "/usr/local/cuda-13.0"));
  const ToolkitFact* cuda = checked.facts.toolkit_at("/usr/local/cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->resolved_root, "/usr/local/cuda-13.0");
  EXPECT_EQ(cuda->nvcc_version, "13.0");
  EXPECT_FALSE(cuda->json_version);  // pip layout
  EXPECT_EQ(cuda->header_version, "13.0");
  // The fix pins the versioned directory, not the symlink that moves.
  for (const auto& finding : checked.findings)
    if (finding.code == "flashinfer-nvcc-too-old") {
      EXPECT_THAT(finding.fix,
                  ::testing::StartsWith("toolkit.cuda_home = \"/usr/local/cuda-13.0\""));
    }
}

TEST(Seed, VenvPipNvccIsOfferedWhenItIsTheOnlyToolkit) {
  auto checked = check_scenario(scenario_named("only-venv-pip-nvcc"));
  ASSERT_FALSE(checked.findings.empty());
  EXPECT_THAT(checked.findings.back().fix,
              ::testing::StartsWith(
                  "toolkit.cuda_home = \"/opt/venv/lib/python3.11/site-packages/nvidia/cu13\""));
}

const Finding& finding_coded(const Checked& checked, std::string_view code) {
  auto found = std::find_if(checked.findings.begin(), checked.findings.end(),
                            [&](const Finding& f) { return f.code == code; });
  if (found == checked.findings.end()) {
    ADD_FAILURE() << "no " << code << " in\n" << describe(checked.findings);
    static const Finding none;
    return none;
  }
  return *found;
}

// A fix is judged by every other rule before it is printed: the example is no longer a 13.0
// toolkit the driver cannot run and torch's cu128 cannot load extensions from.
TEST(ToolkitFix, NamesThePackageThatPassesEveryRuleOnTheNode) {
  auto checked = check_scenario(scenario_named("flashinfer-0.6.18-cu128-driver-12.9"));
  const Finding& gate = finding_coded(checked, "flashinfer-nvcc-too-old");
  EXPECT_EQ(gate.severity, Severity::error);
  EXPECT_EQ(gate.fix,
            "no toolkit on this node satisfies every rule: install cuda-nvcc-12-9 (nvcc 12.9 "
            "passes every rule on this node) and pin it: toolkit.cuda_home = "
            "\"/usr/local/cuda-12.9\" (then clear the FlashInfer JIT cache: its entries are not "
            "keyed on the toolkit)");
  // The package it names passes: the same node with it installed is healthy.
  EXPECT_TRUE(
      check_scenario(scenario_named("healthy-flashinfer-0.6.18-cu128-on-12.9")).findings.empty());
}

TEST(ToolkitFix, SaysWhatBlocksWhenNoReleasePassesEveryRule) {
  // torch cu130 on a driver that runs CUDA 12.4: 13.x breaks the driver, 12.x torch's major.
  auto checked = check_scenario(scenario_named("driver-550-with-cuda-13"));
  const Finding& driver = finding_coded(checked, "driver-too-old-for-toolkit");
  EXPECT_THAT(driver.fix,
              ::testing::HasSubstr("no CUDA toolkit satisfies every rule on this node: even "
                                   "cuda-nvcc-13-0 (nvcc 13.0) breaks driver-too-old-for-toolkit"));
  EXPECT_THAT(driver.fix, ::testing::Not(::testing::HasSubstr("install cuda-nvcc")));
}

// Past the releases the gate was read in, check warns with the evidence and the safe fix.
TEST(FlashInferGate, ANewerReleaseIsWarnedWithTheReleasesReadAndTheSafeFix) {
  auto checked = check_scenario(scenario_named("flashinfer-newer-than-gate-read-on-12.8"));
  EXPECT_FALSE(has_errors(checked.findings)) << describe(checked.findings);
  const Finding& gate = finding_coded(checked, "flashinfer-nvcc-gate-unverified");
  EXPECT_EQ(gate.severity, Severity::warning);
  EXPECT_EQ(gate.summary,
            "FlashInfer 0.7.0 is newer than the releases whose nvcc gate the catalog read (0.6.7 "
            "to 0.6.18): those refuse compute capability 12.0 with nvcc 12.8 at "
            "/usr/local/cuda-12.8/bin/nvcc; this one may not");
  EXPECT_THAT(gate.rule, ::testing::HasSubstr("PR #3633"));
  EXPECT_THAT(gate.fix, ::testing::StartsWith("no toolkit on this node satisfies every rule: "
                                              "install cuda-nvcc-12-9"));
}

// "12.0f" needs nvcc 12.9; with only 12.8 on the node the fix offers the arch-specific target.
TEST(FlashInferRules, FamilyTargetOnNvcc12_8NamesTargetAndTheSuffixThatWorks) {
  auto checked = check_scenario(scenario_named("arch-list-family-on-nvcc-12.8"));
  const Finding& finding = finding_coded(checked, "flashinfer-target-needs-newer-nvcc");
  EXPECT_EQ(finding.summary,
            "FlashInfer would compile for compute_120f with nvcc 12.8 at "
            "/usr/local/cuda-12.8/bin/nvcc, which has no such target");
  EXPECT_EQ(finding.rule,
            "compute_120f needs nvcc >= 12.9 (family targets arrived with CUDA 12.9)");
  EXPECT_THAT(finding.fix, ::testing::EndsWith(
                               "; or toolkit.arch_list = \"12.0a\" (nvcc 12.8 has those targets)"));
}

// FLASHINFER_NVCC pointing at 12.8: the fix is about that variable, not toolkit.cuda_home.
TEST(FlashInferRules, FlashInferNvccIsTheCompilerJudged) {
  auto checked = check_scenario(scenario_named("flashinfer-nvcc-env-12.8"));
  const Finding& finding = finding_coded(checked, "torch-toolkit-major-mismatch");
  EXPECT_EQ(finding.summary, "torch is built for CUDA 13.0 but the JIT compiles with nvcc 12.8");
  EXPECT_EQ(finding.fix,
            "point FLASHINFER_NVCC in [env] at an nvcc that passes "
            "(/usr/local/cuda-13.0/bin/nvcc), or remove it");
}

TEST(FlashInferRules, MismatchedJitCacheGetsThePipCommandThatAlignsIt) {
  auto checked = check_scenario(scenario_named("flashinfer-jit-cache-version-differs"));
  const Finding& finding = finding_coded(checked, "flashinfer-packages-mismatch");
  EXPECT_EQ(finding.summary,
            "flashinfer-jit-cache 0.6.6+cu130 does not match flashinfer-python 0.6.7: `import "
            "flashinfer` raises \"flashinfer-jit-cache version (0.6.6+cu130) does not match "
            "flashinfer version (0.6.7)\"");
  EXPECT_EQ(finding.fix,
            "/opt/venv/bin/python -m pip install --upgrade --no-deps --index-url "
            "https://flashinfer.ai/whl/cu130 \"flashinfer-jit-cache==0.6.7+cu130\"");
  auto cubin = check_scenario(scenario_named("flashinfer-cubin-version-differs"));
  EXPECT_EQ(finding_coded(cubin, "flashinfer-packages-mismatch").fix,
            "/opt/venv/bin/python -m pip install --upgrade --no-deps --index-url "
            "https://flashinfer.ai/whl \"flashinfer-cubin==0.6.7\"");
}

// dirname(dirname(which nvcc)) = /usr/local: the fix pins the real toolkit, and nothing anywhere
// advises CUDA_HOME=/usr/local.
TEST(CudaHome, WrapperRootIsAnErrorAndNeverAdvised) {
  for (const char* name : {"nvcc-wrapper-in-usr-local-bin", "cuda-home-pinned-to-usr-local"}) {
    auto checked = check_scenario(scenario_named(name));
    EXPECT_TRUE(has_errors(checked.findings)) << name;
    for (const auto& finding : checked.findings) {
      EXPECT_THAT(finding.fix, ::testing::Not(::testing::HasSubstr("CUDA_HOME=/usr/local ")));
      EXPECT_THAT(finding.fix, ::testing::Not(::testing::HasSubstr("\"/usr/local\"")));
    }
  }
  auto checked = check_scenario(scenario_named("nvcc-wrapper-in-usr-local-bin"));
  const Finding& finding = finding_coded(checked, "jit-cuda-home-not-toolkit");
  EXPECT_EQ(finding.summary,
            "the unit's JIT would take CUDA_HOME = '/usr/local' (`which nvcc` = "
            "/usr/local/bin/nvcc), which is not a toolkit root: no libcudart.so in lib64/ or "
            "lib/, no include/cuda_runtime.h");
  EXPECT_THAT(finding.fix, ::testing::StartsWith("toolkit.cuda_home = \"/usr/local/cuda-13.0\""));
}

TEST(Mig, VllmOnAMigGpuNamesTheEngineAndTheWayOut) {
  auto checked = check_scenario(scenario_named("mig-mode-gpu-for-vllm"));
  const Finding& finding = finding_coded(checked, "gpu-mig-engine-unsupported");
  EXPECT_EQ(finding.summary,
            "GPU 0 (NVIDIA H100 80GB HBM3) is in MIG mode, and engine.kind = \"vllm\" cannot run "
            "on a MIG instance");
  EXPECT_THAT(finding.fix, ::testing::HasSubstr("`nvidia-smi -i 0 -mig 0`"));
  EXPECT_TRUE(checked.facts.gpus[0].mig);
  EXPECT_FALSE(checked.facts.gpus[1].mig);
}

// NVSwitch without a trained fabric: the finding explains CUDA's 802 and names the unit to start.
TEST(NodeHealth, FabricNotReadyExplains802AndStartsTheFabricManager) {
  auto checked = check_scenario(scenario_named("fabric-manager-stopped-fabric-not-started"));
  const Finding& finding = finding_coded(checked, "gpu-fabric-not-ready");
  EXPECT_EQ(finding.severity, Severity::error);
  EXPECT_EQ(finding.summary,
            "GPU 0,1,2,3,4,5,6,7 not registered with the NVLink fabric: CUDA fails on them with "
            "error 802 \"system not yet initialized\"");
  EXPECT_THAT(finding.facts,
              ::testing::Contains(::testing::Pair("nvidia-fabricmanager.service", "inactive")));
  EXPECT_THAT(finding.fix, ::testing::StartsWith("start the Fabric Manager: `systemctl enable "
                                                 "--now nvidia-fabricmanager`"));
  EXPECT_THAT(finding.fix, ::testing::HasSubstr("580.95.05"));
  // Registration that failed under a running Fabric Manager points at its log instead.
  auto failed = check_scenario(scenario_named("fabric-registration-failed"));
  const Finding& registration = finding_coded(failed, "gpu-fabric-not-ready");
  EXPECT_EQ(registration.summary.substr(0, 6), "GPU 5 ");
  EXPECT_THAT(registration.facts,
              ::testing::Contains(::testing::Pair("GPU 5 (NVIDIA H100 80GB HBM3, 00000000:68:00.0)",
                                                  "fabric completed: Unknown Error")));
  EXPECT_THAT(registration.fix, ::testing::HasSubstr("journalctl -u nvidia-fabricmanager"));
}

// A driver upgraded under the loaded module is its own finding, not "no driver".
TEST(NodeHealth, VersionMismatchIsNotAMissingDriver) {
  auto checked = check_scenario(scenario_named("driver-library-mismatch"));
  const Finding& finding = finding_coded(checked, "driver-library-mismatch");
  EXPECT_THAT(finding.summary,
              ::testing::HasSubstr("\"RM has detected an NVML/RM version mismatch.\""));
  EXPECT_THAT(finding.fix, ::testing::StartsWith("reboot the node"));
  EXPECT_EQ(checked.facts.driver.nvml_error, 18);
  auto missing = check_scenario(scenario_named("no-driver"));
  EXPECT_FALSE(missing.facts.driver.nvml_error == 18);
}

// Xid 79 on the engine's GPU 3: the finding names the GPU, its address and the kernel's line.
TEST(NodeHealth, XidSinceBootNamesTheGpuAndTheLine) {
  auto checked = check_scenario(scenario_named("xid-79-on-engine-gpu"));
  const Finding& finding = finding_coded(checked, "gpu-xid-79");
  EXPECT_EQ(finding.severity, Severity::error);
  EXPECT_THAT(finding.summary,
              ::testing::StartsWith("Xid 79 (GPU has fallen off the bus) since boot on GPU 3"));
  ASSERT_EQ(finding.facts.size(), 1u);
  EXPECT_EQ(finding.facts[0].first, "GPU 3 (PCI:0000:48:00)");
  EXPECT_THAT(finding.facts[0].second, ::testing::EndsWith("GPU has fallen off the bus."));
  EXPECT_THAT(finding.fix, ::testing::StartsWith("reboot the node"));
  ASSERT_EQ(checked.facts.node_health.xids.size(), 1u);
  EXPECT_EQ(checked.facts.node_health.xids[0].gpu, 3);
  auto contained = check_scenario(scenario_named("xid-94-contained-ecc"));
  const Finding& ecc = finding_coded(contained, "gpu-xid-94");
  EXPECT_EQ(ecc.severity, Severity::warning);
  EXPECT_THAT(ecc.facts[0].second, ::testing::StartsWith("2 since boot, last: NVRM: Xid"));
}

TEST(NodeHealth, HealthThresholdsNameEveryGpuAndTheFix) {
  auto checked = check_scenario(scenario_named("gpu-ecc-uncorrected"));
  const Finding& finding = finding_coded(checked, "gpu-ecc-uncorrected");
  EXPECT_EQ(finding.severity, Severity::error);
  EXPECT_THAT(finding.facts, ::testing::ElementsAre(::testing::Pair(
                                 "GPU 2 (NVIDIA RTX PRO 6000 Blackwell Server Edition, "
                                 "00000000:38:00.0)",
                                 "3 uncorrected")));
  EXPECT_THAT(finding.fix, ::testing::HasSubstr("`nvidia-smi -r -i 2`"));
  auto persistence = check_scenario(scenario_named("gpu-persistence-off"));
  const Finding& off = finding_coded(persistence, "gpu-persistence-off");
  EXPECT_EQ(off.severity, Severity::warning);
  EXPECT_EQ(off.facts.size(), 8u);
  EXPECT_THAT(off.fix, ::testing::HasSubstr("systemctl enable --now nvidia-persistenced"));
}

TEST(Facts, GpusFromFakeNvmlAndPythonFromFiles) {
  auto checked = check_scenario(scenario_named("healthy-blackwell-cuda-13"));
  ASSERT_EQ(checked.facts.gpus.size(), 8u);
  EXPECT_EQ(checked.facts.driver.source, "nvml");
  EXPECT_EQ(checked.facts.driver.version, "580.95.05");
  EXPECT_EQ(checked.facts.driver.max_cuda, "13.0");
  EXPECT_EQ(checked.facts.gpus[3].name, "NVIDIA RTX PRO 6000 Blackwell Server Edition");
  EXPECT_EQ(capability_text(checked.facts.gpus[3]), "12.0");
  EXPECT_EQ(checked.facts.gpus[3].memory_total_mib, 97887u);
  ASSERT_TRUE(checked.facts.python);
  EXPECT_EQ(checked.facts.python->torch_version, "2.9.0+cu130");
  EXPECT_EQ(checked.facts.python->torch_cuda, "13.0");
  EXPECT_EQ(checked.facts.python->packages.at("flashinfer"), "0.6.7");
  EXPECT_EQ(checked.facts.python->packages.at("sglang"), "0.5.5");
}

TEST(Facts, NvidiaSmiFallbackWhenNvmlFails) {
  auto checked = check_scenario(scenario_named("healthy-driver-minor-compat-nvidia-smi"));
  EXPECT_EQ(checked.facts.driver.source, "nvidia-smi");
  EXPECT_EQ(checked.facts.driver.version, "535.247.01");
  EXPECT_EQ(checked.facts.driver.max_cuda, "12.2");
  ASSERT_EQ(checked.facts.gpus.size(), 4u);
  EXPECT_EQ(checked.facts.gpus[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(capability_text(checked.facts.gpus[0]), "8.0");
}

}  // namespace
}  // namespace gl::test
