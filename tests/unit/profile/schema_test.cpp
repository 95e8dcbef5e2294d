// SPDX-License-Identifier: Apache-2.0
// The key table (profile/schema.cpp) against what validation builds: every key in it changes the
// resulting Profile, and its ranges and shapes are enforced for every key alike.

#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "catalog/engine_knobs.hpp"
#include "profile/memory_source.hpp"
#include "profile/schema.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

// Every field of a Profile, one per line: two Profiles are the same when their dumps are.
std::string dump(const Profile& p) {
  auto opt = [](const auto& value) { return value ? fmt::format("{}", *value) : std::string("-"); };
  std::string text;
  auto line = [&](std::string_view name, const std::string& value) {
    text += fmt::format("{} = {}\n", name, value);
  };
  line("name", p.name);
  line("sources", fmt::format("{}", p.sources));
  line("description", p.description);
  const auto& e = p.engine;
  line("engine.kind", std::string(engine_kind_name(e.kind)));
  line("engine.venv", opt(e.venv));
  line("engine.python", opt(e.python));
  line("engine.image", opt(e.image));
  line("engine.executable", opt(e.executable));
  line("engine.args", fmt::format("{}", e.args));
  line("engine.argv", fmt::format("{}", e.argv));
  for (const auto& [key, value] : e.knobs) line(key, fmt::format("{}", value));
  line("model.path", p.model.path);
  line("model.served_name", opt(p.model.served_name));
  line("model.prefetch", fmt::format("{}", p.model.prefetch));
  line("model.revision", opt(p.model.revision));
  const auto& l = p.parallelism;
  line("parallelism",
       fmt::format("{} {} {} {} {} {}", l.tp, l.pp, l.ep, l.dp, l.dp_attention, l.nodes));
  line("parallelism.dist_init_addr", opt(l.dist_init_addr));
  const auto& n = p.nodes;
  line("nodes.hosts", fmt::format("{}", n.hosts));
  line("nodes.ssh", fmt::format("{} {} {} {}", opt(n.ssh_user), n.ssh_port, opt(n.ssh_identity),
                                opt(n.ssh_known_hosts)));
  line("nodes.dist_init_port", std::to_string(n.dist_init_port));
  line("nodes.gpulaunch", n.gpulaunch);
  if (const auto& s = p.speculative)
    line("speculative",
         fmt::format("{} {} {} {} {}", s->algorithm, opt(s->draft_model), opt(s->num_steps),
                     opt(s->eagle_topk), opt(s->num_draft_tokens)));
  line("toolkit", fmt::format("{} {} {}", opt(p.toolkit.cuda_home), opt(p.toolkit.min_version),
                              opt(p.toolkit.arch_list)));
  line("gpus", fmt::format("{} {} {}", p.gpus.devices, opt(p.gpus.count), opt(p.gpus.arch)));
  line("caches", fmt::format("{} {}", p.caches.root, p.caches.overrides));
  const auto& v = p.server;
  line("server", fmt::format("{} {} {} {} {} {}", v.host, v.port, v.health_path,
                             v.ready_timeout.count(), v.watchdog.count(), v.drain_timeout.count()));
  line("server.liveness",
       fmt::format("{} {} {} {}", liveness_mode_name(v.liveness), v.liveness_interval.count(),
                   v.liveness_timeout.count(), v.ready == ReadyOn::generate));
  const auto& r = p.restart;
  line("restart",
       fmt::format("{} {} {} {} {} {} {}", r.policy, r.delay.count(), r.max_delay.count(),
                   r.stable_after.count(), r.budget, r.probation.count(), r.step_down));
  const auto& g = p.gate;
  line("gate",
       fmt::format("{} {} {} {} {} {} {} {}", g.prompts, g.max_tokens, g.min_shared_prefix,
                   g.min_throughput, g.requests, g.concurrency, g.max_duration.count(), g.retries));
  const auto& s = p.service;
  line("service",
       fmt::format("{} {} {} {} {} {} {} {}", opt(s.user), s.share_user, opt(s.group),
                   opt(s.memory_max), s.extra, s.unit_extra, s.allow_unsafe_extra, s.allow));
  line("env", fmt::format("{}", p.env));
  line("secrets", fmt::format("{}", p.secrets));
  return text;
}

// Dotted key -> TOML value; nullopt removes the key.
using Keys = std::map<std::string, std::optional<std::string>>;

const Keys kMinimal{
    {"engine.kind", R"("sglang")"},
    {"engine.venv", R"("/opt/venv")"},
    {"model.path", R"("/models/m")"},
};

// What a key needs besides the minimal profile, in both profiles compared.
const std::map<std::string, Keys> kContext{
    {"engine.python",
     {{"engine.kind", R"("vllm")"},
      {"engine.venv", std::nullopt},
      {"engine.executable", R"("/opt/bin/vllm")"}}},
    {"engine.argv",
     {{"engine.kind", R"("command")"},
      {"engine.venv", std::nullopt},
      {"engine.argv", R"(["/opt/bin/serve"])"}}},
    {"model.revision", {{"model.path", R"("org/model")"}}},
    {"parallelism.ep", {{"parallelism.tp", "2"}}},
    {"parallelism.nodes",
     {{"parallelism.tp", "2"}, {"parallelism.dist_init_addr", R"("10.0.0.1:5000")"}}},
    {"nodes.hosts", {{"parallelism.tp", "2"}}},
    {"service.share_user", {{"service.user", R"("llm")"}}},  // only a named user is shared
};

// Keys that take another's place: set, the other goes (engine.image instead of the venv).
const std::map<std::string, std::string> kReplaces{{"engine.image", "engine.venv"}};

Keys context_for(const std::string& path) {
  Keys keys = kMinimal;
  if (auto found = kContext.find(path); found != kContext.end())
    for (const auto& [key, value] : found->second) keys[key] = value;
  if (path.starts_with("nodes.") && path != "nodes.hosts") keys["nodes.hosts"] = R"(["node-a"])";
  // A pass-through key SGLang has no flag for is tried on vLLM (catalog/engine_knobs).
  if (const EngineKnobKey* knob = find_engine_knob_key(path);
      knob && engine_knob_flag(*knob, EngineKind::sglang).empty())
    keys["engine.kind"] = R"("vllm")";
  if (path.starts_with("speculative.") && path != "speculative.algorithm")
    keys["speculative.algorithm"] = R"("EAGLE3")";
  return keys;
}

Result<Profile> load(const Keys& keys) {
  std::string text;
  for (const auto& [key, value] : keys)
    if (value) text += fmt::format("{} = {}\n", key, *value);
  MemorySource source({{"/p/test.toml", text}, {"/p/parent.toml", "description = \"parent\"\n"}});
  return load_profile(source, "test");
}

std::string message(const Result<Profile>& profile) {
  return profile ? std::string("accepted") : profile.error().message;
}

bool is_section(const KeySpec& spec) {
  return spec.type == KeyType::table;
}

TEST(Schema, EveryKeyChangesTheProfile) {
  for (const KeySpec& spec : profile_schema()) {
    if (is_section(spec)) continue;
    const std::string path(spec.path);
    ASSERT_FALSE(spec.sample.empty()) << path << " has no sample value";
    Keys keys = context_for(path);
    auto without = load(keys);
    ASSERT_TRUE(without) << path << ": " << message(without);
    keys[path] = std::string(spec.sample);
    if (auto replaced = kReplaces.find(path); replaced != kReplaces.end())
      keys[replaced->second] = std::nullopt;
    auto with = load(keys);
    ASSERT_TRUE(with) << path << " = " << spec.sample << ": " << message(with);
    EXPECT_NE(dump(*without), dump(*with))
        << path << " = " << spec.sample << " changes nothing in the Profile";
  }
}

TEST(Schema, RangesComeFromTheTable) {
  for (const KeySpec& spec : profile_schema()) {
    if (spec.type != KeyType::integer || !spec.range) continue;
    const std::string path(spec.path);
    for (double outside : {spec.range->low - 1, spec.range->high + 1}) {
      Keys keys = context_for(path);
      keys[path] = fmt::format("{}", static_cast<long long>(outside));
      auto profile = load(keys);
      ASSERT_FALSE(profile) << path << " = " << outside << " was accepted";
      EXPECT_TRUE(profile.error().message.ends_with(fmt::format(
          "'{}' must be between {} and {}, got {}", path, static_cast<long long>(spec.range->low),
          static_cast<long long>(spec.range->high), static_cast<long long>(outside))))
          << profile.error().message;
    }
  }
}

TEST(Schema, ShapesComeFromTheTable) {
  for (const KeySpec& spec : profile_schema()) {
    if (spec.type != KeyType::string || spec.shape == Shape::text || spec.shape == Shape::any)
      continue;
    // FlashInfer's grammar says what is wrong and what to write (tests/malformed/arch-list-*).
    if (spec.shape == Shape::arch_list) continue;
    // '?? x' is a user name OpenSSH's ssh takes (tests/malformed/nodes-ssh-user-*).
    if (spec.shape == Shape::ssh_user) continue;
    const std::string path(spec.path);
    Keys keys = context_for(path);
    keys[path] = R"("?? x")";
    auto profile = load(keys);
    ASSERT_FALSE(profile) << path << " = '?? x' was accepted";
    EXPECT_TRUE(profile.error().message.ends_with(
        fmt::format("'{}' must {}, got '?? x'", path, shape_requirement(spec.shape))))
        << profile.error().message;
  }
}

// So that no message prints them.
TEST(Schema, ControlCharactersAreRefusedBeforeTheShape) {
  Keys keys = kMinimal;
  keys["server.host"] = R"("a\u0007b")";
  EXPECT_TRUE(message(load(keys)).ends_with("'server.host' must not contain control characters"))
      << message(load(keys));
}

TEST(Schema, ArrayEntriesAreCheckedOneByOne) {
  Keys keys = kMinimal;
  keys["gpus.devices"] = R"([0, 1024])";
  EXPECT_TRUE(
      message(load(keys)).ends_with("'gpus.devices' entry 1 must be between 0 and 1023, got 1024"));
  keys["gpus.devices"] = R"(["0", "GPU-x"])";
  EXPECT_TRUE(
      message(load(keys))
          .ends_with("'gpus.devices' entry 1 must be an index or a GPU-/MIG- UUID, got 'GPU-x'"))
      << message(load(keys));
  keys.erase("gpus.devices");
  keys["service.extra"] = R"(["Nice=5", "not a directive"])";
  EXPECT_TRUE(
      message(load(keys))
          .ends_with(
              "'service.extra' entry 1 must be a single 'Key=Value' line, got 'not a directive'"))
      << message(load(keys));
  keys["service.extra"] = R"(["Nice=5\u0007"])";
  EXPECT_TRUE(
      message(load(keys)).ends_with("'service.extra' entry 0 must not contain control characters"))
      << message(load(keys));
}

TEST(Schema, NumbersAndDurationsUseTheirRanges) {
  Keys keys = kMinimal;
  keys["engine.mem_fraction"] = "0";
  EXPECT_TRUE(
      message(load(keys)).ends_with("'engine.mem_fraction' must be above 0 and at most 1, got 0"))
      << message(load(keys));
  keys.erase("engine.mem_fraction");
  keys["server.watchdog"] = R"("2h")";
  EXPECT_TRUE(message(load(keys)).ends_with("'server.watchdog' must be between 0s and 1h, got 2h"))
      << message(load(keys));
}

}  // namespace
}  // namespace gl
