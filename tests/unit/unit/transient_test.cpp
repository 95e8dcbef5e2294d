// SPDX-License-Identifier: Apache-2.0
// `gpulaunch exec`'s transient unit: the properties come from the unit the service is rendered
// from, each with the D-Bus type systemd-run sends for its directive (bus-unit-util.c), and a
// directive that cannot be mapped is refused by name.

#include "unit/transient.hpp"

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "unit/escape.hpp"
#include "unit/render.hpp"

namespace gl {
namespace {

constexpr std::string_view kTransient = "gpulaunch-exec-demo-1.service";

Profile load(const std::string& text) {
  MemorySource source({{"/p/demo.toml", text}});
  auto profile = load_profile(source, "/p/demo.toml");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

constexpr const char* kProfile =
    "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n[model]\npath = \"/m\"\n"
    "[toolkit]\ncuda_home = \"/usr/local/cuda-12.8\"\n"
    "[service]\nuser = \"llm\"\nmemory_max = \"200G\"\n"
    "[secrets]\nHF_TOKEN = \"/etc/gpulaunch/secrets/hf_token\"\n";

std::vector<BusProperty> properties_of(const Profile& profile) {
  const UnitFile unit = render_unit(profile, make_launch_plan(profile), RenderOptions{});
  auto properties = transient_properties(unit, kTransient);
  EXPECT_TRUE(properties) << properties.error().message;
  return properties.value_or(std::vector<BusProperty>{});
}

std::vector<const BusProperty*> named(const std::vector<BusProperty>& properties,
                                      std::string_view name) {
  std::vector<const BusProperty*> found;
  for (const auto& property : properties)
    if (property.name == name) found.push_back(&property);
  return found;
}

TEST(Transient, TheServicesUserEnvironmentAndDirectoriesComeAlong) {
  const auto properties = properties_of(load(kProfile));
  ASSERT_EQ(named(properties, "User").size(), 1u);
  EXPECT_EQ(named(properties, "User")[0]->value, BusValue(std::string("llm")));
  EXPECT_EQ(named(properties, "WorkingDirectory")[0]->value,
            BusValue(std::string("/var/lib/gpulaunch/demo/engine")));
  std::vector<std::string> environment;
  for (const auto* property : named(properties, "Environment")) {
    EXPECT_EQ(bus_signature(property->value), "as");
    for (const auto& word : std::get<std::vector<std::string>>(property->value))
      environment.push_back(word);
  }
  EXPECT_NE(std::find(environment.begin(), environment.end(), "CUDA_HOME=/usr/local/cuda-12.8"),
            environment.end());
  // %d is the transient unit's own credentials directory: transient properties are not
  // specifier-expanded.
  EXPECT_NE(std::find(environment.begin(), environment.end(),
                      "HF_TOKEN_PATH=/run/credentials/gpulaunch-exec-demo-1.service/HF_TOKEN"),
            environment.end());
  EXPECT_EQ(named(properties, "LoadCredential")[0]->value,
            BusValue(BusPairs{{"HF_TOKEN", "/etc/gpulaunch/secrets/hf_token"}}));
  EXPECT_EQ(named(properties, "StateDirectory")[0]->value,
            BusValue(std::vector<std::string>{"gpulaunch/demo/engine"}));
  EXPECT_EQ(named(properties, "MemoryMax")[0]->value, BusValue(uint64_t{200} << 30));
}

TEST(Transient, TheSandboxMapsToTheTypesSystemdRunSends) {
  const auto properties = properties_of(load(kProfile));
  auto only = [&](std::string_view name) {
    auto found = named(properties, name);
    EXPECT_EQ(found.size(), 1u) << name;
    return found.empty() ? BusValue{} : found[0]->value;
  };
  EXPECT_EQ(only("ProtectSystem"), BusValue(std::string("strict")));
  EXPECT_EQ(only("PrivateTmp"), BusValue(true));
  EXPECT_EQ(only("NoNewPrivileges"), BusValue(true));
  EXPECT_EQ(only("CapabilityBoundingSet"), BusValue(uint64_t{0}));
  EXPECT_EQ(only("RestrictNamespaces"), BusValue(uint64_t{0}));
  EXPECT_EQ(only("UMask"), BusValue(uint32_t{027}));
  EXPECT_EQ(only("SystemCallErrorNumber"), BusValue(int32_t{1}));
  std::vector<BusValue> filters;
  for (const auto* property : named(properties, "SystemCallFilter"))
    filters.push_back(property->value);
  EXPECT_EQ(filters, (std::vector<BusValue>{BusFilter{true, {"@system-service"}},
                                            BusFilter{true, {"pidfd_getfd"}}}));
  EXPECT_EQ(only("RestrictAddressFamilies"),
            BusValue(BusFilter{true, {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}}));
  EXPECT_EQ(only("LimitNOFILE"), BusValue(uint64_t{1048576}));
  EXPECT_EQ(only("LimitNOFILESoft"), BusValue(uint64_t{1048576}));
  EXPECT_EQ(bus_signature(only("DevicePolicy")), "s");
  std::vector<BusPairs> devices;
  for (const auto* property : named(properties, "DeviceAllow"))
    devices.push_back(std::get<BusPairs>(property->value));
  EXPECT_EQ(devices.front(), (BusPairs{{"char-nvidia*", "rw"}}));
  // The service's lifecycle is not the command's.
  for (auto left_out : {"ExecStart", "ExecStartPre", "ExecStopPost", "Type", "Restart",
                        "WatchdogSec", "TimeoutStartSec", "RestartPreventExitStatus"})
    EXPECT_TRUE(named(properties, left_out).empty()) << left_out;
}

// An MPS daemon's pipe directory (catalog/sandbox_allowances) binds into `exec`'s unit too.
TEST(Transient, BindPathsMapToSourceDestinationAndRecursiveFlag) {
  const Profile profile = load(kProfile);
  LaunchOptions options;
  options.sandbox.mps_daemon = true;
  const UnitFile unit = render_unit(profile, make_launch_plan(profile, options), RenderOptions{});
  auto properties = transient_properties(unit, kTransient);
  ASSERT_TRUE(properties) << properties.error().message;
  auto binds = named(*properties, "BindPaths");
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(bus_signature(binds[0]->value), "a(ssbt)");
  EXPECT_EQ(std::get<BusBinds>(binds[0]->value),
            (BusBinds{{"/tmp/nvidia-mps", "/tmp/nvidia-mps", false, 16384}}));
}

TEST(Transient, ADirectiveWithoutAMappingIsRefusedByName) {
  Profile profile = load(kProfile);
  profile.service.extra.push_back("CPUQuota=50%");
  const UnitFile unit = render_unit(profile, make_launch_plan(profile), RenderOptions{});
  auto properties = transient_properties(unit, kTransient);
  ASSERT_FALSE(properties);
  EXPECT_EQ(properties.error().message,
            "Cannot run in the service's sandbox: CPUQuota= has no transient-unit mapping");

  profile = load(kProfile);
  profile.service.extra.push_back("CapabilityBoundingSet=CAP_NET_ADMIN");
  auto capabilities = transient_properties(
      render_unit(profile, make_launch_plan(profile), RenderOptions{}), kTransient);
  ASSERT_FALSE(capabilities);
  EXPECT_EQ(capabilities.error().message,
            "Cannot run in the service's sandbox: CapabilityBoundingSet=CAP_NET_ADMIN: "
            "capability names ('CAP_NET_ADMIN') are not mapped");
}

// Issue 28: `exec PROFILE -- 'x<newline>[Service]<newline>ExecStopPost=+CMD'` put the command
// into Description=, which systemd 252 writes into the transient unit's file unescaped: CMD ran
// as root at the next daemon-reload. The description is one line; any other property holding a
// control byte is refused before it reaches systemd.
TEST(Transient, NothingTheCallerWroteBecomesALineOfTheTransientUnit) {
  const std::string description = transient_description(
      "demo", {"sh", "-c", "x\n[Service]\nExecStopPost=+/bin/touch /pwned\r\n", "\\"});
  EXPECT_EQ(description.find_first_of("\n\r"), std::string::npos) << description;
  EXPECT_FALSE(description.ends_with('\\')) << description;
  EXPECT_EQ(description,
            "gpulaunch exec demo: sh -c x\\x0a[Service]\\x0aExecStopPost=+/bin/touch "
            "/pwned\\x0d\\x0a \\ ");

  UnitFile unit;
  unit.add("Service", "Environment", quote_environment("A", "x\n[Service]\nExecStopPost=+/x"));
  auto properties = transient_properties(unit, kTransient);
  ASSERT_FALSE(properties);
  EXPECT_EQ(properties.error().message,
            "Cannot run in the service's sandbox: Environment= holds a control character, which "
            "would become unit-file text");
  UnitFile paths;
  paths.add("Service", "ReadWritePaths", quote_path_word("/data\n[Service]"));
  EXPECT_FALSE(transient_properties(paths, kTransient));
}

TEST(Transient, UnitWordsUndoTheRenderersQuoting) {
  const std::string odd = "a b\"c\\d%e$f\tg\x01";
  auto words = unit_words(quote_environment("X", odd) + " " + quote_path_word("/p q"), "/creds");
  ASSERT_TRUE(words) << words.error().message;
  EXPECT_EQ(*words, (std::vector<std::string>{"X=" + odd, "/p q"}));
  EXPECT_EQ(unit_words("\"N=%d/T\"", "/run/credentials/u").value(),
            std::vector<std::string>{"N=/run/credentials/u/T"});
  EXPECT_FALSE(unit_words("%h/x", "/c"));
  EXPECT_FALSE(unit_words("\"open", "/c"));
}

}  // namespace
}  // namespace gl
