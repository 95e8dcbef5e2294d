// SPDX-License-Identifier: Apache-2.0
#include "plan/launch_plan.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "catalog/jit_caches.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

std::string env_of(const LaunchPlan& plan, std::string_view name) {
  for (const auto& [key, value] : plan.environment)
    if (key == name) return value;
  return "<unset>";
}

Profile load(const std::string& text) {
  MemorySource source({{"/p/k26.toml", text}});
  auto profile = load_profile(source, "k26");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

constexpr const char* kPinned = R"(
[engine]
kind = "sglang"
venv = "/opt/venv"
[model]
path = "/m"
[toolkit]
cuda_home = "/usr/local/cuda-13.0"
[server]
host = "0.0.0.0"
port = 30000
)";

// The incident: nvcc 12.8 first on the shell's PATH. The unit's PATH must put the pinned
// toolkit first and CUDA_HOME/CUDA_PATH must name it, whatever the caller's shell holds.
TEST(LaunchPlan, PinsTheToolkitAheadOfEverythingElse) {
  auto plan = make_launch_plan(load(kPinned));
  EXPECT_EQ(env_of(plan, "CUDA_HOME"), "/usr/local/cuda-13.0");
  EXPECT_EQ(env_of(plan, "CUDA_PATH"), "/usr/local/cuda-13.0");
  EXPECT_TRUE(env_of(plan, "PATH").starts_with("/usr/local/cuda-13.0/bin:/opt/venv/bin:"));
  EXPECT_EQ(env_of(plan, "LD_LIBRARY_PATH"), "/usr/local/cuda-13.0/lib64");
}

TEST(LaunchPlan, PinsEveryJitCacheVariableUnderTheRoot) {
  auto plan = make_launch_plan(load(kPinned));
  for (const auto& cache : jit_caches())
    for (const auto& variable : cache.variables)
      EXPECT_TRUE(env_of(plan, variable.name).starts_with("/var/cache/gpulaunch/k26/"))
          << variable.name;
  EXPECT_EQ(plan.caches.size(), jit_caches().size());
}

TEST(LaunchPlan, ProbesAWildcardListenerOnLoopback) {
  EXPECT_EQ(make_launch_plan(load(kPinned)).health_url, "http://127.0.0.1:30000/health");
}

// FLASHINFER_CUBIN_DIR would hide the flashinfer-cubin package SGLang installs: never pinned;
// without the package FlashInfer downloads below its pinned workspace.
TEST(LaunchPlan, PinsTileLangAndTritonHomeAsCachesButNeverFlashinfersCubinDirectory) {
  auto plan = make_launch_plan(load(kPinned));
  EXPECT_EQ(env_of(plan, "FLASHINFER_CUBIN_DIR"), "<unset>");
  auto cubins = flashinfer_cubin_directory(plan);
  ASSERT_TRUE(cubins);
  EXPECT_EQ(cubins->path, "/var/cache/gpulaunch/k26/flashinfer/.cache/flashinfer/cubins");
  EXPECT_FALSE(cubins->explicit_choice);
  EXPECT_EQ(env_of(plan, "TILELANG_CACHE_DIR"), "/var/cache/gpulaunch/k26/tilelang");
  // The CuTe DSL's default is below the temp dir, which PrivateTmp=yes empties at every start.
  EXPECT_EQ(env_of(plan, "CUTE_DSL_CACHE_DIR"), "/var/cache/gpulaunch/k26/cute_dsl");
  EXPECT_EQ(env_of(plan, "TRITON_HOME"), "/var/cache/gpulaunch/k26/triton_home");
  EXPECT_EQ(env_of(plan, "TRITON_CACHE_DIR"), "/var/cache/gpulaunch/k26/triton");
}

// FlashInfer reads FLASHINFER_CUBIN_DIR before the flashinfer-cubin package: the profile may
// point it at the package's cubins (other cache variables move with caches.paths only).
TEST(LaunchPlan, TheProfileMayPointFlashinferAtThePackagesCubins) {
  const std::string package = "/opt/venv/lib/python3.11/site-packages/flashinfer_cubin/cubins";
  auto plan = make_launch_plan(
      load(std::string(kPinned) + "[env]\nFLASHINFER_CUBIN_DIR = \"" + package + "\"\n"));
  EXPECT_EQ(env_of(plan, "FLASHINFER_CUBIN_DIR"), package);
  EXPECT_EQ(flashinfer_cubin_directory(plan)->path, package);
  EXPECT_TRUE(flashinfer_cubin_directory(plan)->explicit_choice);
  MemorySource source(
      {{"/p/k26.toml", std::string(kPinned) + "[env]\nTILELANG_CACHE_DIR = \"/x\"\n"}});
  auto refused = load_profile(source, "k26");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "/p/k26.toml:13:1: 'env.TILELANG_CACHE_DIR' is pinned by gpulaunch; set "
            "'caches.paths.tilelang' instead");
}

// An offline node (the profile says so the way huggingface_hub reads it) may not fetch
// FlashInfer's cubins either: the unit says so to FlashInfer, unless the profile itself did.
TEST(LaunchPlan, AnOfflineProfileStopsFlashinferFromDownloading) {
  EXPECT_EQ(env_of(make_launch_plan(load(kPinned)), "FLASHINFER_NO_DOWNLOAD"), "<unset>");
  for (const char* offline :
       {"HF_HUB_OFFLINE = \"1\"", "HF_HUB_OFFLINE = \"yes\"", "TRANSFORMERS_OFFLINE = \"TRUE\""})
    EXPECT_EQ(env_of(make_launch_plan(load(std::string(kPinned) + "[env]\n" + offline + "\n")),
                     "FLASHINFER_NO_DOWNLOAD"),
              "1")
        << offline;
  EXPECT_EQ(env_of(make_launch_plan(load(std::string(kPinned) + "[env]\nHF_HUB_OFFLINE = \"0\"\n")),
                   "FLASHINFER_NO_DOWNLOAD"),
            "<unset>");
  // "0" still disables downloads in FlashInfer (any non-empty value does); the profile's word wins.
  EXPECT_EQ(
      env_of(make_launch_plan(load(std::string(kPinned) + "[env]\nHF_HUB_OFFLINE = \"1\"\n"
                                                          "FLASHINFER_NO_DOWNLOAD = \"0\"\n")),
             "FLASHINFER_NO_DOWNLOAD"),
      "0");
}

// SGLang's /health generates a token and may take SGLANG_HEALTH_CHECK_TIMEOUT (20 s) on a busy,
// healthy server: the probe waits that long and a margin, and the watchdog spans several
// probes. vLLM's answers at once.
TEST(LaunchPlan, SizesTheHealthTimeoutAndTheWatchdogOnTheEnginesOwnHealthAnswer) {
  auto sglang = make_launch_plan(load(kPinned));
  EXPECT_EQ(sglang.health_timeout, Seconds{23});
  EXPECT_EQ(sglang.watchdog, Seconds{120});  // server.watchdog's default is already enough
  EXPECT_GE(sglang.watchdog, kWatchdogHealthTimeouts * sglang.health_timeout);

  auto patient = make_launch_plan(
      load(std::string(kPinned) + "[env]\nSGLANG_HEALTH_CHECK_TIMEOUT = \"180\"\n"));
  EXPECT_EQ(patient.health_timeout, Seconds{183});
  EXPECT_EQ(patient.watchdog, Seconds{915});

  auto short_watchdog = make_launch_plan(load(std::string(kPinned) + "watchdog = \"30s\"\n"));
  EXPECT_EQ(short_watchdog.watchdog, Seconds{115});
  auto no_watchdog = make_launch_plan(load(std::string(kPinned) + "watchdog = \"0s\"\n"));
  EXPECT_EQ(no_watchdog.watchdog, Seconds{0});

  std::string vllm = kPinned;
  vllm.replace(vllm.find("sglang"), 6, "vllm");
  auto fast = make_launch_plan(load(vllm + "watchdog = \"30s\"\nliveness = \"health\"\n"));
  EXPECT_EQ(fast.health_timeout, kMinHealthTimeout);
  EXPECT_EQ(fast.watchdog, Seconds{30});
  // Where a liveness stall can fire, it must come before the watchdog: 1.5 x (60 s + 5 s).
  auto live = make_launch_plan(load(vllm + "watchdog = \"30s\"\n"));
  EXPECT_EQ(live.watchdog, Seconds{98});
}

std::string vllm_profile(const std::string& server, const std::string& args = "") {
  std::string text = kPinned;
  text.replace(text.find("sglang"), 6, "vllm");
  if (!args.empty()) text.replace(text.find("[model]"), 0, "args = " + args + "\n");
  return text + server;
}

TEST(LaunchPlan, VllmIsProbedWithOneTokenForItsServedModelAndReadThroughItsMetrics) {
  auto plan = make_launch_plan(load(vllm_profile("")));
  EXPECT_EQ(plan.liveness.mode, LivenessMode::generate);
  EXPECT_EQ(plan.liveness.probe_path, "/v1/completions");
  EXPECT_EQ(plan.liveness.probe_body, R"({"model":"/m","prompt":"hi","max_tokens":1})");
  EXPECT_EQ(plan.liveness.metrics_path, "/metrics");
  EXPECT_EQ(plan.liveness.in_flight_metric, "vllm:num_requests_running");
  EXPECT_EQ(plan.liveness.tokens_metric, "vllm:generation_tokens_total");
  EXPECT_EQ(env_of(plan, "PYTHONFAULTHANDLER"), "1");
  // engine.args come last: the name vLLM serves under is the one they give.
  auto renamed = make_launch_plan(load(vllm_profile("", R"(["--served-model-name", "kimi"])")));
  EXPECT_EQ(renamed.liveness.probe_body, R"({"model":"kimi","prompt":"hi","max_tokens":1})");
}

// vLLM's --api-key guards /v1/completions; the key is not copied into the unit, so the metrics
// (which it leaves open) watch the engine alone.
TEST(LaunchPlan, AnApiKeyLeavesVllmToItsMetrics) {
  auto plan = make_launch_plan(load(vllm_profile("", R"(["--api-key", "s3cret"])")));
  EXPECT_EQ(plan.liveness.mode, LivenessMode::generate);
  EXPECT_TRUE(plan.liveness.probe_path.empty());
  EXPECT_EQ(plan.liveness.metrics_path, "/metrics");
  auto from_env = make_launch_plan(load(vllm_profile("[env]\nVLLM_API_KEY = \"s3cret\"\n")));
  EXPECT_TRUE(from_env.liveness.probe_path.empty());
}

// A key in [secrets] is the one the probe may carry: `run` reads the credential and sets the
// variable vLLM reads it from; the unit names the credential, never the key.
TEST(LaunchPlan, AKeyInSecretsIsSentWithTheProbe) {
  auto plan = make_launch_plan(
      load(vllm_profile("[secrets]\nVLLM_API_KEY = \"/etc/gpulaunch/secrets/vllm\"\n")));
  EXPECT_EQ(plan.liveness.probe_path, "/v1/completions");
  EXPECT_EQ(plan.liveness.key_credential, "VLLM_API_KEY");
  EXPECT_EQ(plan.liveness.key_variable, "VLLM_API_KEY");
  EXPECT_EQ(plan.liveness.metrics_path, "/metrics");
  // With a second source the engine may hold another key: nothing is sent.
  auto both = make_launch_plan(load(vllm_profile(
      "[secrets]\nVLLM_API_KEY = \"/etc/gpulaunch/secrets/vllm\"\n", R"(["--api_key=other"])")));
  EXPECT_TRUE(both.liveness.probe_path.empty());
  EXPECT_TRUE(both.liveness.key_credential.empty());
}

std::string llamacpp_profile(const std::string& server, const std::string& args = "") {
  return "[engine]\nkind = \"llamacpp\"\nexecutable = \"/opt/llama.cpp/bin/llama-server\"\n" +
         (args.empty() ? std::string() : "args = " + args + "\n") +
         "[model]\npath = \"/models/q.gguf\"\n[server]\nhost = \"0.0.0.0\"\n" + server;
}

// llama.cpp defers a task while every slot is busy: the probe waits behind long generations, so
// "generate" turns its metrics on and the decode counter vouches for a busy server.
TEST(LaunchPlan, LlamacppGenerateTurnsItsMetricsOn) {
  auto plan = make_launch_plan(load(llamacpp_profile("")));
  EXPECT_EQ(std::count(plan.argv.begin(), plan.argv.end(), "--metrics"), 1);
  EXPECT_EQ(plan.liveness.metrics_path, "/metrics");
  EXPECT_EQ(plan.liveness.tokens_metric, "llamacpp:n_decode_total");
  EXPECT_EQ(plan.liveness.probe_path, "/completion");
  auto already = make_launch_plan(load(llamacpp_profile("", R"(["--metrics"])")));
  EXPECT_EQ(std::count(already.argv.begin(), already.argv.end(), "--metrics"), 1);
  auto health = make_launch_plan(load(llamacpp_profile("liveness = \"health\"\n")));
  EXPECT_EQ(std::count(health.argv.begin(), health.argv.end(), "--metrics"), 0);
}

// llama.cpp's key guards /metrics as well as /completion: a key gpulaunch cannot send leaves
// neither; one on a [secrets] credential through --api-key-file keeps both.
TEST(LaunchPlan, LlamacppKeyGuardsItsMetricsToo) {
  auto keyed = make_launch_plan(load(llamacpp_profile("", R"(["--api-key", "s3cret"])")));
  EXPECT_TRUE(keyed.liveness.probe_path.empty());
  EXPECT_TRUE(keyed.liveness.metrics_path.empty());
  auto file = make_launch_plan(load(llamacpp_profile(
      "[secrets]\nLLAMA_KEY = \"/etc/gpulaunch/secrets/llama\"\n",
      R"(["--api-key-file", "/run/credentials/gpulaunch-k26.service/LLAMA_KEY"])")));
  EXPECT_EQ(file.liveness.probe_path, "/completion");
  EXPECT_EQ(file.liveness.metrics_path, "/metrics");
  EXPECT_EQ(file.liveness.key_credential, "LLAMA_KEY");
  EXPECT_EQ(file.liveness.key_variable, "");  // llama-server reads the file itself
}

// trtllm-serve's /health_generate is a chat completion: it fails for a model without a chat
// template. The probe is a plain one-token completion for the served name.
TEST(LaunchPlan, TrtllmIsProbedWithoutAChatTemplate) {
  std::string text = kPinned;
  text.replace(text.find("sglang"), 6, "trtllm");
  auto plan = make_launch_plan(load(text));
  EXPECT_EQ(plan.liveness.probe_path, "/v1/completions");
  EXPECT_EQ(plan.liveness.probe_body, R"({"model":"/m","prompt":"hi","max_tokens":1})");
}

// trtllm-serve records iteration statistics only with enable_iter_perf_stats in its options
// file: "generate" passes a file of gpulaunch's own, which `run` writes, and reads /metrics for
// the iteration number, with no in-flight gauge; engine.args naming their own file keep it.
TEST(LaunchPlan, TrtllmGenerateCountsIterationsThroughItsOwnOptionsFile) {
  std::string text = kPinned;
  text.replace(text.find("sglang"), 6, "trtllm");
  auto plan = make_launch_plan(load(text));
  const std::string file = "/var/lib/gpulaunch/k26/engine/gpulaunch-llm-api-options.yaml";
  EXPECT_EQ(plan.engine_options_path, file);
  EXPECT_EQ(plan.engine_options_text, "enable_iter_perf_stats: true\n");
  ASSERT_GE(plan.argv.size(), 2u);
  EXPECT_EQ(plan.argv[plan.argv.size() - 2], "--extra_llm_api_options");
  EXPECT_EQ(plan.argv.back(), file);
  EXPECT_EQ(plan.liveness.metrics_path, "/metrics");
  EXPECT_EQ(plan.liveness.metrics_format, MetricsFormat::iteration_stats);
  EXPECT_EQ(plan.liveness.tokens_metric, "iter");
  EXPECT_EQ(plan.liveness.in_flight_metric, "");
  EXPECT_EQ(plan.liveness.user_options_file, "");

  for (const std::string args :
       {R"(["--config", "/etc/trt.yaml"])", R"(["--extra_llm_api_options=/etc/trt.yaml"])"}) {
    std::string own = text;
    own.replace(own.find("[model]"), 7, "args = " + args + "\n[model]");
    auto theirs = make_launch_plan(load(own));
    EXPECT_EQ(theirs.engine_options_path, "") << args;
    EXPECT_EQ(theirs.liveness.user_options_file, "/etc/trt.yaml") << args;
    EXPECT_EQ(std::count(theirs.argv.begin(), theirs.argv.end(), "--extra_llm_api_options"), 0)
        << args;
    EXPECT_EQ(theirs.liveness.metrics_path, "/metrics") << args;
  }

  auto health = make_launch_plan(load(text + "liveness = \"health\"\n"));
  EXPECT_EQ(health.engine_options_path, "");
  EXPECT_EQ(std::count(health.argv.begin(), health.argv.end(), "--extra_llm_api_options"), 0);
}

// SGLang's running gauge is refreshed every 30 s while idle: a shorter timeout would see a
// finished request's gauge stand still.
TEST(LaunchPlan, SglangMetricsTimeoutCoversItsRefresh) {
  auto plan = make_launch_plan(load(std::string(kPinned) +
                                    "liveness = \"metrics\"\nliveness_interval = \"5s\"\n"
                                    "liveness_timeout = \"10s\"\n"));
  EXPECT_EQ(plan.liveness.timeout, Seconds{60});
  // Its probe alone needs no floor.
  auto probe = make_launch_plan(
      load(std::string(kPinned) + "liveness_interval = \"5s\"\nliveness_timeout = \"10s\"\n"));
  EXPECT_EQ(probe.liveness.timeout, Seconds{10});
}

// An SGLang rank above 0 serves a stub health server that answers 200 whatever its scheduler
// does: its liveness is health alone, rank 0's watches the group.
TEST(LaunchPlan, SglangRanksAboveZeroLeaveLivenessToRankZero) {
  const std::string two_nodes = std::string(kPinned) +
                                "[parallelism]\ntp = 16\nnodes = 2\n"
                                "dist_init_addr = \"10.0.0.1:5000\"\n"
                                "[nodes]\nhosts = [\"10.0.0.1\", \"10.0.0.2\"]\n";
  auto rank0 = make_launch_plan(load(two_nodes), {.node_rank = 0});
  EXPECT_EQ(rank0.liveness.mode, LivenessMode::generate);
  EXPECT_FALSE(rank0.liveness.rank0_watches);
  auto rank1 = make_launch_plan(load(two_nodes), {.node_rank = 1});
  EXPECT_EQ(rank1.liveness.mode, LivenessMode::health);
  EXPECT_FALSE(rank1.liveness.can_stall());
  EXPECT_TRUE(rank1.liveness.rank0_watches);
  EXPECT_TRUE(rank1.liveness.probe_path.empty());
}

TEST(LaunchPlan, SglangGetsItsMetricsFlagOnceWhenLivenessReadsThem) {
  auto plan = make_launch_plan(load(std::string(kPinned) + "liveness = \"metrics\"\n"));
  EXPECT_EQ(std::count(plan.argv.begin(), plan.argv.end(), "--enable-metrics"), 1);
  EXPECT_EQ(plan.liveness.tokens_metric, "sglang:realtime_tokens_total");
  EXPECT_TRUE(plan.liveness.probe_path.empty());  // "metrics" sends no generation
  std::string already = kPinned;
  already.replace(already.find("[model]"), 0, "args = [\"--enable-metrics\"]\n");
  auto once = make_launch_plan(load(already + "liveness = \"metrics\"\n"));
  EXPECT_EQ(std::count(once.argv.begin(), once.argv.end(), "--enable-metrics"), 1);
  // "generate" probes /health_generate and leaves SGLang's metrics off.
  auto generate = make_launch_plan(load(kPinned));
  EXPECT_EQ(generate.liveness.probe_path, "/health_generate");
  EXPECT_TRUE(generate.liveness.probe_body.empty());
  EXPECT_TRUE(generate.liveness.metrics_path.empty());
  EXPECT_EQ(std::count(generate.argv.begin(), generate.argv.end(), "--enable-metrics"), 0);
}

TEST(LaunchPlan, HealthAndOffLeaveNoStallBehind) {
  auto health = make_launch_plan(load(vllm_profile("liveness = \"health\"\n")));
  EXPECT_FALSE(health.liveness.can_stall());
  EXPECT_EQ(env_of(health, "PYTHONFAULTHANDLER"), "<unset>");
  EXPECT_EQ(health.watchdog, Seconds{120});
  auto off = make_launch_plan(load(vllm_profile("liveness = \"off\"\n")));
  EXPECT_EQ(off.watchdog, Seconds{0});
  // server.ready = "generate" needs the probe even where liveness sends none.
  auto ready =
      make_launch_plan(load(vllm_profile("liveness = \"health\"\nready = \"generate\"\n")));
  EXPECT_EQ(ready.liveness.probe_path, "/v1/completions");
  EXPECT_EQ(ready.liveness.ready, ReadyOn::generate);
}

TEST(LaunchPlan, IsDeterministic) {
  auto profile = load(kPinned);
  auto first = make_launch_plan(profile);
  auto second = make_launch_plan(profile);
  EXPECT_EQ(first.environment, second.environment);
  EXPECT_EQ(first.argv, second.argv);
}

constexpr const char* kTwoNodes = R"(
[engine]
kind = "sglang"
venv = "/opt/venv"
[model]
path = "/m"
[parallelism]
tp = 16
nodes = 2
dist_init_addr = "10.0.0.1:5000"
[nodes]
hosts = ["10.0.0.1", "10.0.0.2"]
)";

// Gloo binds what the host name resolves to (loopback on many nodes) and NCCL the first
// interface it likes: a group pins both to the interface that routes to rank 0.
TEST(LaunchPlan, PinsNcclAndGlooToTheInterfaceThatRoutesToRankZero) {
  LaunchOptions options;
  options.node_rank = 1;
  options.socket_interface = "enp65s0f1";
  const auto plan = make_launch_plan(load(kTwoNodes), options);
  EXPECT_EQ(env_of(plan, "NCCL_SOCKET_IFNAME"), "enp65s0f1");
  EXPECT_EQ(env_of(plan, "GLOO_SOCKET_IFNAME"), "enp65s0f1");
}

TEST(LaunchPlan, TheProfilesOwnSocketInterfaceWins) {
  LaunchOptions options;
  options.socket_interface = "enp65s0f1";
  const auto plan = make_launch_plan(
      load(std::string(kTwoNodes) + "[env]\nNCCL_SOCKET_IFNAME = \"=ib0\"\n"), options);
  EXPECT_EQ(env_of(plan, "NCCL_SOCKET_IFNAME"), "=ib0");
  EXPECT_EQ(env_of(plan, "GLOO_SOCKET_IFNAME"), "enp65s0f1");
}

TEST(LaunchPlan, ASingleNodeLeavesTheSocketInterfaceAlone) {
  LaunchOptions options;
  options.socket_interface = "eth0";
  const auto plan = make_launch_plan(load(kPinned), options);
  EXPECT_EQ(env_of(plan, "NCCL_SOCKET_IFNAME"), "<unset>");
  EXPECT_EQ(env_of(plan, "GLOO_SOCKET_IFNAME"), "<unset>");
}

}  // namespace
}  // namespace gl
