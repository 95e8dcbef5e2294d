// SPDX-License-Identifier: Apache-2.0
// service.extra and service.unit_extra cannot undo what gpulaunch hardens, change who the engine
// runs as, or run a command with privileges, unless the profile says it is root-equivalent.

#include "profile/unsafe_directives.hpp"

#include <set>

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "unit/render.hpp"

namespace gl {
namespace {

TEST(UnsafeDirectives, PrivilegePrefixesOnAnyExecLine) {
  for (const char* line :
       {"ExecStartPre=+/bin/sh -c id", "ExecStartPost=!/bin/true", "ExecStopPost=!!/bin/true",
        "ExecReload=@+/bin/sh sh", "ExecCondition=-!/bin/true", "ExecStartPre=:+/bin/true",
        "ExecStartPre=\"+/bin/sh\"", "ExecStartPre=/bin/true ; +/bin/sh",
        "ExecStartPre=\\x2b/bin/sh", "ExecStartPre=|/bin/sh"})
    EXPECT_TRUE(unsafe_directive_reason(line)) << line;
  for (const char* line : {"ExecStartPre=/bin/true", "ExecStartPre=-/bin/true --flag=+x",
                           "ExecStartPre=@/bin/true true", "ExecReload=/bin/kill -HUP $MAINPID",
                           "ExecStartPre=\"/opt/my tool/run\""})
    EXPECT_FALSE(unsafe_directive_reason(line)) << line;
  EXPECT_EQ(unsafe_directive_reason("ExecStartPre=+/bin/sh"),
            "ExecStartPre= with the '+' prefix runs its command with full privileges");
  EXPECT_EQ(unsafe_directive_reason("ExecStartPre=!!/bin/sh"),
            "ExecStartPre= with the '!!' prefix runs its command as root, ignoring User=");
}

// Every directive the renderer writes is either the engine's command and bookkeeping (which
// service.extra may not set at all) or on the list: a new hardening line in render.cpp that is
// not listed fails here.
TEST(UnsafeDirectives, CoverEverythingTheRendererHardens) {
  MemorySource source(
      {{"/p/k.toml",
        std::string("[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n[model]\npath = "
                    "\"/m\"\n[service]\nuser = \"sglang\"\n[caches]\nroot = \"/data/c\"\n")}});
  auto profile = load_profile(source, "/p/k.toml");
  ASSERT_TRUE(profile) << profile.error().message;
  const UnitFile unit = render_unit(*profile, make_launch_plan(*profile), RenderOptions{});
  // Neither hardening nor identity: how the engine starts, stops, restarts and is limited.
  const std::set<std::string> bookkeeping{"Type",
                                          "NotifyAccess",
                                          "ExecStart",
                                          "Environment",
                                          "TimeoutStartSec",
                                          "TimeoutStopSec",
                                          "WatchdogSec",
                                          "KillMode",
                                          "KillSignal",
                                          "SendSIGKILL",
                                          "Restart",
                                          "RestartSec",
                                          "RestartPreventExitStatus",
                                          "ExecStartPre",
                                          "ExecStartPost",
                                          "ExecStopPost",
                                          "MemoryMax",
                                          "LimitMEMLOCK",
                                          "LimitNOFILE",
                                          "LimitCORE",
                                          "SystemCallErrorNumber"};
  size_t hardening = 0;
  for (const auto& section : unit.sections()) {
    if (section.name != "Service") continue;
    for (const auto& entry : section.entries) {
      if (bookkeeping.contains(entry.key)) continue;
      EXPECT_TRUE(unsafe_directive_reason(entry.key + "=no")) << entry.key << " is not listed";
      ++hardening;
    }
  }
  EXPECT_GE(hardening, 28u);
}

TEST(UnsafeDirectives, IdentityAndRootFileDirectives) {
  for (const char* line :
       {"User=root", "Group=root", "DynamicUser=no", "SupplementaryGroups=disk", "PAMName=login",
        "BindPaths=/etc", "BindReadOnlyPaths=/root", "RootDirectory=/", "ReadOnlyPaths=-/x",
        "InaccessiblePaths=", "KeyringMode=shared", "EnvironmentFile=/etc/shadow",
        "StandardOutput=file:/etc/passwd", "LoadCredential=x:/etc/shadow",
        "ConfigurationDirectory=ssh", "PrivateNetwork=no", "CapabilityBoundingSet=~"})
    EXPECT_TRUE(unsafe_directive_reason(line)) << line;
  for (const char* line :
       {"LimitCORE=infinity", "Nice=5", "CPUAffinity=0-7", "OOMScoreAdjust=100",
        "Documentation=https://example.com", "After=nvidia-fabricmanager.service", "X-Team=ml",
        "BindsTo=nvidia-persistenced.service", "OnFailure=notify@%n.service"})
    EXPECT_FALSE(unsafe_directive_reason(line)) << line;
  EXPECT_EQ(unsafe_directive_reason("User=root"),
            "User= changes the user or credentials the engine runs with");
}

// Issue 28: CacheDirectoryMode=0777 made the cache root world-writable, an empty
// RestartPreventExitStatus= let systemd restart past a spent budget. Stricter modes and added
// statuses stay allowed: they only narrow what the engine may do or how often it restarts.
TEST(UnsafeDirectives, ValuesThatLoosenModesOrResetVerdicts) {
  for (const char* line : {"CacheDirectoryMode=0777",
                           "StateDirectoryMode=0775",
                           "RuntimeDirectoryMode=1777",
                           "LogsDirectoryMode=0757",
                           "ConfigurationDirectoryMode=4755",
                           "CacheDirectoryMode=",
                           "CacheDirectoryMode=rwx",
                           "RestartPreventExitStatus=",
                           "RestartPreventExitStatus= ",
                           "RestartForceExitStatus=79",
                           "SuccessExitStatus=79 SIGKILL",
                           "OOMScoreAdjust=-1000",
                           "OOMScoreAdjust=-1",
                           "CPUSchedulingPolicy=fifo",
                           "CPUSchedulingPriority=99",
                           "CPUSchedulingResetOnFork=no",
                           "IOSchedulingClass=realtime",
                           "LogRateLimitIntervalSec=0",
                           "LogRateLimitBurst=0",
                           "LogLevelMax=emerg"})
    EXPECT_TRUE(unsafe_directive_reason(line)) << line;
  for (const char* line :
       {"CacheDirectoryMode=0700", "StateDirectoryMode=0750", "RuntimeDirectoryMode=0755",
        "RestartPreventExitStatus=3", "OOMScoreAdjust=500", "OOMScoreAdjust=0", "Nice=5"})
    EXPECT_FALSE(unsafe_directive_reason(line)) << line;
  EXPECT_EQ(unsafe_directive_reason("CacheDirectoryMode=0777"),
            "CacheDirectoryMode=0777 is looser than the default 0755 systemd applies as root");
  EXPECT_EQ(unsafe_directive_reason("RestartPreventExitStatus="),
            "an empty RestartPreventExitStatus= resets the statuses gpulaunch stops restarts with");
  MemorySource source(
      {{"/p/k.toml",
        std::string("[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n[model]\npath = "
                    "\"/m\"\n[service]\nextra = [\"RestartPreventExitStatus=\"]\n")}});
  auto profile = load_profile(source, "/p/k.toml");
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "/p/k.toml:7:10: 'service.extra' may not hold 'RestartPreventExitStatus=': an empty "
            "RestartPreventExitStatus= resets the statuses gpulaunch stops restarts with (only "
            "with 'service.allow_unsafe_extra = true', which makes the profile root-equivalent)");
}

TEST(UnsafeDirectives, AllowedWhenTheProfileOptsIn) {
  const std::string text =
      "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n[model]\npath = \"/m\"\n[service]\n"
      "extra = [\"ExecStartPre=+/usr/bin/nvidia-smi -pm 1\", \"ProtectHome=no\"]\n";
  MemorySource refused({{"/p/k.toml", text}});
  auto profile = load_profile(refused, "/p/k.toml");
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "/p/k.toml:7:10: 'service.extra' may not hold 'ExecStartPre=+/usr/bin/nvidia-smi -pm "
            "1': ExecStartPre= with the '+' prefix runs its command with full privileges (only "
            "with 'service.allow_unsafe_extra = true', which makes the profile root-equivalent)");
  MemorySource allowed({{"/p/k.toml", text + "allow_unsafe_extra = true\n"}});
  profile = load_profile(allowed, "/p/k.toml");
  ASSERT_TRUE(profile) << profile.error().message;
  const UnitFile unit = render_unit(*profile, make_launch_plan(*profile), RenderOptions{});
  // After gpulaunch's own prepare-caches, which stays first.
  const auto pre = unit.values("Service", "ExecStartPre");
  ASSERT_EQ(pre.size(), 2u);
  EXPECT_NE(pre[0].find("prepare-caches"), std::string::npos) << pre[0];
  EXPECT_EQ(pre[1], "+/usr/bin/nvidia-smi -pm 1");
  // gpulaunch's own directives stay its own even then.
  MemorySource owned(
      {{"/p/k.toml", text + "allow_unsafe_extra = true\nunit_extra = [\"Wants=x\"]\n"}});
  EXPECT_TRUE(load_profile(owned, "/p/k.toml"));
  MemorySource exec_start({{"/p/k.toml", std::string(text).replace(text.find("ProtectHome=no"), 14,
                                                                   "ExecStart=/bin/sh") +
                                             "allow_unsafe_extra = true\n"}});
  profile = load_profile(exec_start, "/p/k.toml");
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "/p/k.toml:7:53: 'service.extra' may not set ExecStart= (gpulaunch writes it)");
}

}  // namespace
}  // namespace gl
