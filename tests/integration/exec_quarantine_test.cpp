// SPDX-License-Identifier: Apache-2.0
// A poisoned cache and `gpulaunch exec` on a real systemd 252 booted privately
// (tests/integration/harness), with the mock SGLang: a start whose traceback runs through its
// torchinductor cache gets that cache moved aside and starts once more, serving; `exec` runs a
// command with the unit's environment, user and sandbox.

#include <chrono>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::event_of;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;
using namespace std::chrono_literals;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
const std::string kRestart = "[restart]\ndelay = \"1s\"\nmax_delay = \"4s\"\n";

class ExecQuarantine : public MockEngineSuite<ExecQuarantine> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "exec-quarantine-work", kGpulaunch,
                              GL_SOURCE_DIR);
  }

 protected:
  static gpulaunch::testing::ExecResult in_host(const std::string& command) {
    return host().systemd().exec({"sh", "-c", command + " 2>&1"});
  }
};

TEST_F(ExecQuarantine, APoisonedInductorCacheIsMovedAsideAndTheEngineStartsOnce) {
  host().write_profile("poison", 31201, kRestart, "MOCK_SGLANG_POISONED_CACHE = \"1\"\n");
  // What a corrupt torch.compile cache does to every start until it is deleted (vLLM #24915):
  // the mock's compiled graph in it raises while the marker is there.
  const std::string cache = "/var/cache/gpulaunch/poison/torchinductor";
  ASSERT_EQ(
      in_host("mkdir -p " + cache + "/fxgraph/mock && touch " + cache + "/fxgraph/mock/POISONED")
          .exit_code,
      0);
  gpulaunch("up poison --runtime --force");  // the first start crashes; up may say so
  nlohmann::json events;
  ASSERT_TRUE(eventually(
      [&] {
        events = events_of("poison");
        auto status = status_of("poison");
        return has_event(events, "cache-quarantined") && status.value("state", "") == "active";
      },
      90s))
      << events.dump(2) << "\n"
      << gpulaunch("logs poison -n 80").out;
  const auto event = event_of(events, "cache-quarantined");
  EXPECT_NE(event["evidence"].get<std::string>().find(
                "File \"" + cache + "/fxgraph/mock/cmockgraph.py\", line 2, in call"),
            std::string::npos)
      << event.dump(2);
  EXPECT_NE(event["action"].get<std::string>().find(
                "to /var/cache/gpulaunch/poison/torchinductor.quarantined-"),
            std::string::npos)
      << event.dump(2);
  // Retried once: one restart, no crash counted.
  EXPECT_FALSE(has_event(events, "crash")) << events.dump(2);
  EXPECT_EQ(status_of("poison").value("restarts", -1), 1) << status_of("poison").dump(2);
  // Kept for inspection, and listed; the cache itself is a fresh one.
  auto listed = in_host("ls /var/cache/gpulaunch/poison");
  EXPECT_NE(listed.out.find("torchinductor.quarantined-"), std::string::npos) << listed.out;
  EXPECT_EQ(in_host("test -e " + cache + "/fxgraph/mock/POISONED").exit_code, 1);
  auto caches = gpulaunch("cache poison");
  EXPECT_NE(caches.out.find("inductor: quarantined copy /var/cache/gpulaunch/poison/"
                            "torchinductor.quarantined-"),
            std::string::npos)
      << caches.out;
  gpulaunch("down poison --runtime --purge");
}

TEST_F(ExecQuarantine, ExecRunsAsTheServiceWithItsEnvironmentAndSandbox) {
  auto added = host().systemd().exec(
      {"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "glexec"});
  ASSERT_EQ(added.exit_code, 0) << added.out;
  // A toolkit that is not there: up --force installs it anyway, and the unit pins CUDA_HOME.
  host().write_profile("execd", 31202,
                       "[service]\nuser = \"glexec\"\n[toolkit]\ncuda_home = \"/opt/cuda-12.8\"\n");
  auto up = gpulaunch("up execd --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  // What the service's own unit says.
  auto shown = in_host("systemctl show -p Environment gpulaunch-execd.service");
  const std::string assignments = " " + shown.out.substr(shown.out.find('=') + 1);
  auto unit_value = [&](const std::string& name) {
    const auto at = assignments.find(" " + name + "=");
    if (at == std::string::npos) return std::string("<not in the unit>");
    const auto begin = at + name.size() + 2;
    return assignments.substr(begin, assignments.find_first_of(" \n", begin) - begin);
  };
  auto seen =
      gpulaunch("exec execd -- sh -c 'echo CUDA_HOME=$CUDA_HOME; echo PATH=$PATH; id -un; pwd'");
  ASSERT_EQ(seen.exit_code, 0) << seen.out;
  EXPECT_EQ(unit_value("CUDA_HOME"), "/opt/cuda-12.8") << shown.out;
  EXPECT_NE(seen.out.find("CUDA_HOME=/opt/cuda-12.8\n"), std::string::npos)
      << seen.out << shown.out;
  EXPECT_NE(seen.out.find("PATH=" + unit_value("PATH") + "\n"), std::string::npos)
      << seen.out << shown.out;
  EXPECT_NE(seen.out.find("\nglexec\n/var/lib/gpulaunch/execd/engine\n"), std::string::npos)
      << seen.out;
  // ProtectSystem=strict: /usr and /etc are read-only to it, as to the engine; its state
  // directory is its own.
  EXPECT_NE(gpulaunch("exec execd -- touch /usr/gl-exec-probe").exit_code, 0);
  EXPECT_NE(gpulaunch("exec execd -- touch /etc/gl-exec-probe").exit_code, 0);
  EXPECT_EQ(in_host("test -e /usr/gl-exec-probe || test -e /etc/gl-exec-probe").exit_code, 1);
  auto wrote = gpulaunch("exec execd -- touch /var/lib/gpulaunch/execd/engine/probe");
  EXPECT_EQ(wrote.exit_code, 0) << wrote.out;
  // The command's status is gpulaunch's; the transient unit is gone afterwards.
  EXPECT_EQ(gpulaunch("exec execd -- sh -c 'exit 7'").exit_code, 7);
  auto left = in_host("systemctl list-units --all --no-legend 'gpulaunch-execd-exec-*'");
  EXPECT_EQ(left.out, "") << left.out;
  gpulaunch("down execd --runtime --purge");
}

// Issue 28, item 1: the command became the transient unit's Description=, which systemd 252
// writes into the unit's file as it came: a newline, "[Service]" and "ExecStopPost=+CMD" ran CMD
// as root at the next daemon-reload. Item 2: Ctrl-C left the command running with root's terminal
// as its stdin, and `systemctl edit` drop-ins did not hold for exec.
TEST_F(ExecQuarantine, ExecsArgumentsDropInsAndInterruptionsStayInTheService) {
  auto added = host().systemd().exec(
      {"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "glhostile"});
  ASSERT_EQ(added.exit_code, 0) << added.out;
  host().write_profile("exech", 31203, "[service]\nuser = \"glhostile\"\n");
  auto up = gpulaunch("up exech --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  const std::string exec = "'" + kGpulaunch + "' exec exech -- ";

  // The attack, in the command's words and in a word of its own; a reload while it runs.
  const std::string running =
      "until systemctl list-units --no-legend 'gpulaunch-exech-exec-*' | grep -q .; do sleep "
      "0.2; done; ";
  const std::string payload =
      "\"$(printf 'x\\n[Service]\\nExecStopPost=+/bin/touch /gl-pwned-by-exec\\n')\"";
  auto attacked = in_host(exec + "sh -c 'sleep 5' " + payload + " & " + running +
                          "cat /run/systemd/transient/gpulaunch-exech-exec-*.service; "
                          "systemctl daemon-reload; wait; sleep 1; "
                          "test -e /gl-pwned-by-exec && echo PWNED; echo done");
  EXPECT_EQ(attacked.out.find("PWNED"), std::string::npos) << attacked.out;
  EXPECT_EQ(attacked.out.find("\nExecStopPost="), std::string::npos) << attacked.out;
  EXPECT_NE(attacked.out.find("\nDescription=gpulaunch exec exech: sh -c sleep 5 "
                              "x\\x0a[Service]\\x0aExecStopPost=+/bin/touch /gl-pwned-by-exec\n"),
            std::string::npos)
      << attacked.out;
  EXPECT_NE(attacked.out.find("done"), std::string::npos) << attacked.out;

  // Root's terminal is never the command's: its stdin is /dev/null, its stdout a pipe.
  auto terminal = in_host("script -qec \"" + exec +
                          "sh -c 'readlink /proc/self/fd/0; test -t 1 || echo out-not-a-tty'\" "
                          "/dev/null");
  EXPECT_NE(terminal.out.find("/dev/null"), std::string::npos) << terminal.out;
  EXPECT_NE(terminal.out.find("out-not-a-tty"), std::string::npos) << terminal.out;

  // Ctrl-C stops the transient unit and its command; exec exits as a command SIGINT ended.
  // The SIGINT goes once the command runs as the service's user: sent while the start job was
  // still queued (a fixed 2 s wait, on a loaded machine), exec rightly said the command never ran.
  auto interrupted = in_host(exec +
                             "sleep 300 & pid=$!; "
                             "until pgrep -u glhostile -x sleep >/dev/null; do sleep 0.1; done; "
                             "kill -INT $pid; wait $pid; "
                             "echo status=$?; sleep 1; "
                             "systemctl list-units --all --no-legend 'gpulaunch-exech-exec-*'; "
                             "pgrep -u glhostile sleep || echo no-sleep-left");
  EXPECT_NE(interrupted.out.find("status=130"), std::string::npos) << interrupted.out;
  EXPECT_NE(interrupted.out.find("no-sleep-left"), std::string::npos) << interrupted.out;
  EXPECT_EQ(interrupted.out.find("gpulaunch-exech-exec-"), std::string::npos) << interrupted.out;

  // A `systemctl edit` drop-in hides a path from exec as from the engine.
  ASSERT_EQ(in_host("mkdir -p /srv/gl-hidden /etc/systemd/system/gpulaunch-exech.service.d && "
                    "printf '[Service]\\nInaccessiblePaths=/srv/gl-hidden\\n' > "
                    "/etc/systemd/system/gpulaunch-exech.service.d/override.conf && "
                    "systemctl daemon-reload")
                .exit_code,
            0);
  auto hidden = in_host(exec + "ls /srv/gl-hidden");
  EXPECT_NE(hidden.exit_code, 0) << hidden.out;
  EXPECT_NE(hidden.out.find("Permission denied"), std::string::npos) << hidden.out;
  in_host("rm -rf /etc/systemd/system/gpulaunch-exech.service.d && systemctl daemon-reload");
  gpulaunch("down exech --runtime --purge");
}

// Issue 31, item 3: `warm --compile` runs SGLang's compile_deep_gemm (the mock's, whose server
// builds its kernels into DG_JIT_CACHE_DIR) as the service would, so the next start is warm.
TEST_F(ExecQuarantine, WarmCompileBuildsTheKernelsTheNextStartUses) {
  host().write_profile("precompiled", 31204, "",
                       "MOCK_JIT_GROW_SECONDS = \"4\"\n"
                       "MOCK_JIT_CACHE_VARIABLE = \"DG_JIT_CACHE_DIR\"\n"
                       "MOCK_SGLANG_COMPILE_LINGER = \"1\"\n");
  auto up = gpulaunch("up precompiled --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  // Beside the running service it would fight for the port and the GPUs.
  auto beside = gpulaunch("warm --compile precompiled");
  EXPECT_EQ(beside.exit_code, 125) << beside.out;
  EXPECT_NE(beside.out.find("Refusing to warm --compile while gpulaunch-precompiled.service is "
                            "active: the command needs the service's port and GPUs; stop it "
                            "with `gpulaunch down precompiled` first"),
            std::string::npos)
      << beside.out;
  auto where = gpulaunch("exec precompiled -- sh -c 'echo $DG_JIT_CACHE_DIR; id -un'");
  ASSERT_EQ(where.exit_code, 0) << where.out;
  const std::string cache = where.out.substr(0, where.out.find('\n'));
  const std::string user =
      where.out.substr(cache.size() + 1, where.out.find('\n', cache.size() + 1) - cache.size() - 1);
  ASSERT_FALSE(cache.empty()) << where.out;
  const std::string built = cache + "/.cache/flashinfer/mock-jit/cached_ops";
  ASSERT_EQ(gpulaunch("down precompiled --runtime").exit_code, 0);
  ASSERT_EQ(gpulaunch("cache clear precompiled").exit_code, 0);
  EXPECT_NE(in_host("test -e " + built + "/mock-jit-build.json").exit_code, 0);

  auto compiled = gpulaunch("warm --compile precompiled");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.out;
  EXPECT_NE(compiled.out.find("\nDeepGEMM Kernels compilation finished successfully.\n"),
            std::string::npos)
      << compiled.out;
  // Root's cache upkeep ran first: the caches are stamped for this node, so the next start keeps
  // what the step built; the step ran as the service user, who owns every kernel.
  EXPECT_NE(compiled.out.find("gpulaunch: JIT caches"), std::string::npos) << compiled.out;
  auto owners = in_host("find " + built + " -type f -printf '%u\\n' | sort -u");
  EXPECT_EQ(owners.out, user + "\n") << owners.out;
  const std::string listing = "ls -l --time-style=+%s.%N " + built;
  const auto before = in_host(listing);
  EXPECT_NE(before.out.find("mock-jit-build.json"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("kernel_1.o"), std::string::npos) << before.out;

  // The next start finds every kernel and compiles nothing: not one file written or replaced.
  auto warm_up = gpulaunch("up precompiled --runtime --force");
  ASSERT_EQ(warm_up.exit_code, 0) << warm_up.out;
  EXPECT_EQ(in_host(listing).out, before.out);
  EXPECT_EQ(in_host("systemctl list-units --all --no-legend 'gpulaunch-precompiled-compile-*'").out,
            "");
  gpulaunch("down precompiled --runtime --purge");
}

}  // namespace
