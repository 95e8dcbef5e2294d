// SPDX-License-Identifier: Apache-2.0
// The Prometheus metrics on a real systemd 252 booted privately (tests/integration/harness): after
// the mock SGLang's CUDA OOM and its restart, the profile's .prom file in node_exporter's textfile
// directory counts the stop by class, passes `promtool check metrics` (Debian's prometheus), and
// Debian's own prometheus-node-exporter serves it.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/mock_engine_suite.hpp"
#include "util/state_paths.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::ExecResult;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
const std::string kRestart = "[restart]\ndelay = \"1s\"\nmax_delay = \"4s\"\n";
// Debian 12's packages (scripts/install-deps.sh installs both), as CMake found them.
const std::string kPromtool = GL_PROMTOOL;
const std::string kNodeExporter = GL_NODE_EXPORTER;

class SuperviseMetrics : public MockEngineSuite<SuperviseMetrics> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "supervise-metrics-work", kGpulaunch,
                              GL_SOURCE_DIR);
  }

 protected:
  // The harness's /var is an overlay over the host's: the directory as Debian's package makes it
  // (root-owned, 0755), and whatever is written there stays inside.
  static std::string textfile_directory() {
    return std::string(gl::state_paths::kTextfileDirectory);
  }
  static std::string prom_file(const std::string& name) {
    return textfile_directory() + "/" + gl::state_paths::metrics_file_name(name);
  }
  static ExecResult inside(const std::string& script) {
    return host().systemd().exec({"sh", "-c", script});
  }
};

// A TCP port nothing listens on now (the harness shares this network namespace).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return 0;
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST_F(SuperviseMetrics, ACudaOomIsCountedByClassPassesPromtoolAndNodeExporterServesIt) {
  ASSERT_TRUE(kPromtool.starts_with("/") && fs::exists(kPromtool))
      << "install Debian's prometheus (scripts/install-deps.sh)";
  ASSERT_TRUE(kNodeExporter.starts_with("/") && fs::exists(kNodeExporter))
      << "install Debian's prometheus-node-exporter (scripts/install-deps.sh)";
  ASSERT_EQ(inside("install -d -o root -g root -m 0755 " + textfile_directory()).exit_code, 0);

  host().write_profile("promoom", 31131, kRestart);
  set_mode("promoom", "cuda-oom");
  auto up = gpulaunch("up promoom --runtime --force");
  set_mode("promoom", "normal");
  EXPECT_NE(up.exit_code, 0) << up.out;  // the first start never served
  ASSERT_TRUE(eventually([&] {
    auto s = status_of("promoom");
    return s.value("restarts", 0) >= 1 && s.value("state", "") == "active";
  })) << status_of("promoom").dump(2);

  // record-exit wrote the file at the stop: the stop counted by its class.
  const std::string stop_line = "gpulaunch_stops_total{profile=\"promoom\",class=\"cuda-oom\"} 1\n";
  auto at_stop = inside("cat " + prom_file("promoom"));
  ASSERT_EQ(at_stop.exit_code, 0);
  EXPECT_NE(at_stop.out.find(stop_line), std::string::npos) << at_stop.out;

  // While it serves, the timer's command rewrites it (as root, into the same place).
  auto write = gpulaunch("metrics --write");
  ASSERT_EQ(write.exit_code, 0) << write.out;
  auto serving =
      inside("stat -c '%U %a' " + prom_file("promoom") + " && cat " + prom_file("promoom"));
  ASSERT_EQ(serving.exit_code, 0);
  const std::string& text = serving.out;
  EXPECT_TRUE(text.starts_with("root 644\n")) << text;
  for (const std::string& line :
       {stop_line, std::string("gpulaunch_up{profile=\"promoom\"} 1\n"),
        std::string("gpulaunch_ready{profile=\"promoom\"} 1\n"),
        std::string("gpulaunch_gpu_step_down_level{profile=\"promoom\"} 1\n"),
        std::string("gpulaunch_consecutive_failures{profile=\"promoom\"} 1\n")})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  // READY=1 and every WATCHDOG=1 since set systemd's WatchdogTimestamp: a few seconds at most.
  EXPECT_NE(text.find("gpulaunch_seconds_since_progress{profile=\"promoom\"} "), std::string::npos)
      << text;
  // `metrics PROFILE` prints the same families.
  auto printed = gpulaunch("metrics promoom");
  EXPECT_NE(printed.out.find(stop_line), std::string::npos) << printed.out;

  // promtool (Debian's prometheus) checks the exposition and its lint rules.
  const fs::path copy = host().work() / "gpulaunch_promoom.prom";
  std::ofstream(copy) << text.substr(text.find('\n') + 1);
  const std::string check = kPromtool + " check metrics < '" + copy.string() + "' 2>&1";
  FILE* promtool = ::popen(check.c_str(), "r");
  ASSERT_NE(promtool, nullptr);
  std::string said;
  char buffer[512];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, promtool)) said.append(buffer, n);
  EXPECT_EQ(::pclose(promtool), 0) << said;
  EXPECT_EQ(said, "");

  // Debian's node_exporter, as nobody, on loopback, with only the textfile collector, reading the
  // directory gpulaunch wrote: a scrape carries the lines and no textfile error.
  const int port = free_port();
  ASSERT_NE(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  auto scrape =
      inside("setpriv --reuid=65534 --regid=65534 --clear-groups " + kNodeExporter +
             " --web.listen-address=" + address +
             " --collector.disable-defaults --collector.textfile --collector.textfile.directory=" +
             textfile_directory() +
             " >/dev/null 2>&1 & exporter=$!; "
             "for i in $(seq 50); do python3 -c \"import urllib.request, sys; "
             "sys.stdout.write(urllib.request.urlopen('http://" +
             address +
             "/metrics', timeout=2).read().decode())\" 2>/dev/null && break; sleep 0.2; done; "
             "kill $exporter; wait $exporter 2>/dev/null; true");
  EXPECT_NE(scrape.out.find("gpulaunch_stops_total{class=\"cuda-oom\",profile=\"promoom\"} 1\n"),
            std::string::npos)
      << scrape.out.substr(0, 4000);
  EXPECT_NE(scrape.out.find("gpulaunch_up{profile=\"promoom\"} 1\n"), std::string::npos);
  EXPECT_NE(scrape.out.find("node_textfile_scrape_error 0\n"), std::string::npos);

  // `down` keeps the file with up 0; `down --purge` (the profile uninstalled) removes it.
  gpulaunch("down promoom --runtime");
  auto down = inside("cat " + prom_file("promoom"));
  EXPECT_NE(down.out.find("gpulaunch_up{profile=\"promoom\"} 0\n"), std::string::npos) << down.out;
  EXPECT_NE(down.out.find(stop_line), std::string::npos) << down.out;
  gpulaunch("down promoom --runtime --purge");
  EXPECT_NE(inside("test -e " + prom_file("promoom")).exit_code, 0);
}

}  // namespace
