// SPDX-License-Identifier: Apache-2.0
// Golden tests, as quadlet's: every profile in tests/golden/ and profiles/ renders to exactly the
// unit stored beside it (tests/golden/NAME.service, tests/golden/examples/NAME.service), and may
// carry its own assertions in "## " comment lines:
//   ## assert-key-is SECTION KEY VALUE      every value of KEY in SECTION equals VALUE (one of)
//   ## assert-env NAME VALUE                Environment= pins NAME to exactly VALUE
//   ## assert-argv ["argv0", "arg", ...]    the engine's argv, as JSON
//   ## assert-no-key SECTION KEY            KEY does not appear in SECTION
//   ## node-rank N                          render rank N of a multi-node profile (default 0)
//   ## golden keeps cache-lines             store every JIT cache's Environment= line (see below)
// and the node facts a render reads, in "## fact" lines (the render is built as `up` builds it):
//   ## fact engine-version VERSION          the engine's version installed in engine.venv
//   ## fact infiniband yes                  the node has InfiniBand (/sys/class/infiniband)
//   ## fact socket-interface NAME           the node routes to rank 0 through NAME
// A golden is about what its profile says: the Environment= lines of every JIT cache at its default
// place (catalog/jit_caches, one per variable, CACHE_ROOT/DIRECTORY[/SUBPATH]) are stored as one
// marker line, except in the golden that keeps them, so a new cache rewrites that golden and the
// ones that move a cache, not every golden. A cache line that differs from its default keeps the
// whole block in the golden.
// After an intended change: GPULAUNCH_UPDATE_GOLDEN=1 ctest --test-dir build -R Golden
// (or scripts/update-golden.sh, which also shows the diff), then review the diff.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/engines.hpp"
#include "catalog/jit_caches.hpp"
#include "catalog/nvidia_devices.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"
#include "unit/escape.hpp"
#include "unit/render.hpp"
#include "unit/temp_dir.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

const fs::path kSource{GL_SOURCE_DIR};

struct GoldenCase {
  std::string label;
  fs::path input;
  fs::path expected;
  std::vector<fs::path> search;
};

void PrintTo(const GoldenCase& golden, std::ostream* out) {
  *out << golden.label;
}

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  auto collect = [&](const fs::path& inputs, const fs::path& expected_dir, std::string prefix) {
    std::vector<fs::path> files;
    for (const auto& item : fs::directory_iterator(inputs))
      if (item.path().extension() == ".toml") files.push_back(item.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files)
      cases.push_back({prefix + file.stem().string(),
                       file,
                       expected_dir / (file.stem().string() + ".service"),
                       {inputs}});
  };
  collect(kSource / "tests/golden", kSource / "tests/golden", "");
  collect(kSource / "profiles", kSource / "tests/golden/examples", "example_");
  return cases;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Source paths in the header depend on the checkout; goldens spell the root as {src}.
std::string portable(std::string text) {
  const std::string root = kSource.string();
  for (size_t at; (at = text.find(root)) != std::string::npos;)
    text.replace(at, root.size(), "{src}");
  return text;
}

// The unit lines of every JIT cache at its default directory under the plan's cache root.
std::string default_cache_lines(const LaunchPlan& plan) {
  std::string lines;
  for (const JitCache& cache : jit_caches())
    for (const CacheVariable& variable : cache.variables) {
      std::string path = plan.cache_root + "/" + std::string(cache.directory);
      if (!variable.subpath.empty()) path += "/" + std::string(variable.subpath);
      lines += "Environment=" + quote_environment(std::string(variable.name), path) + "\n";
    }
  return lines;
}

std::string cache_marker(const LaunchPlan& plan) {
  return "# (golden) Environment= of every JIT cache at " + plan.cache_root +
         "/DIRECTORY, as tests/golden/sglang-serve.service spells out\n";
}

// The unit as a golden stores it: the default cache lines as the marker, unless `keep`.
std::string golden_text(std::string text, const LaunchPlan& plan, bool keep) {
  if (keep) return text;
  const std::string lines = default_cache_lines(plan);
  if (auto at = text.find(lines); at != std::string::npos)
    text.replace(at, lines.size(), cache_marker(plan));
  return text;
}

bool keeps_cache_lines(const GoldenCase& golden) {
  return slurp(golden.input).find("\n## golden keeps cache-lines\n") != std::string::npos;
}

// The rank a "## node-rank N" line asks for, and the facts a golden carries ("## fact" lines).
LaunchOptions launch_options(const GoldenCase& golden) {
  LaunchOptions launch;
  std::istringstream text(slurp(golden.input));
  for (std::string line; std::getline(text, line);) {
    if (line.starts_with("## node-rank ")) launch.node_rank = std::stoll(line.substr(13));
    std::istringstream words(line);
    std::string marker, verb, name, value;
    words >> marker >> verb >> name >> value;
    if (marker == "##" && verb == "fact" && name == "engine-version") launch.engine_version = value;
    if (marker == "##" && verb == "fact" && name == "infiniband")
      launch.infiniband = value == "yes";
    if (marker == "##" && verb == "fact" && name == "socket-interface")
      launch.socket_interface = value;
    if (marker == "##" && verb == "fact" && name == "device")
      launch.sandbox.devices.push_back(value);
    if (marker == "##" && verb == "fact" && name == "mps")
      launch.sandbox.mps_daemon = value == "yes";
  }
  return launch;
}

Result<std::pair<Profile, UnitFile>> render_case(const GoldenCase& golden,
                                                 const std::string& binary) {
  DirectorySource source(golden.search);
  auto profile = load_profile(source, golden.input.string());
  if (!profile) return std::unexpected(profile.error());
  RenderOptions options;
  options.gpulaunch_binary = binary;
  options.version = "(golden)";
  return std::pair{
      *profile, render_unit(*profile, make_launch_plan(*profile, launch_options(golden)), options)};
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, RendersExactlyTheStoredUnit) {
  const auto& golden = GetParam();
  auto rendered = render_case(golden, "/usr/bin/gpulaunch");
  ASSERT_TRUE(rendered) << rendered.error().message;
  const LaunchPlan plan = make_launch_plan(rendered->first, launch_options(golden));
  const std::string text =
      portable(golden_text(rendered->second.to_text(), plan, keeps_cache_lines(golden)));
  if (const char* update = std::getenv("GPULAUNCH_UPDATE_GOLDEN"); update && *update == '1') {
    fs::create_directories(golden.expected.parent_path());
    std::ofstream(golden.expected, std::ios::binary) << text;
    GTEST_SKIP() << "updated " << golden.expected;
  }
  ASSERT_TRUE(fs::exists(golden.expected))
      << golden.expected << " is missing; run with GPULAUNCH_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(text, slurp(golden.expected));
}

// Exactly one golden spells the cache lines out, and it does contain them all.
TEST(GoldenCacheLines, OneGoldenKeepsEveryDefaultCacheLine) {
  const std::vector<GoldenCase> cases = golden_cases();
  std::vector<std::string> keeping;
  for (const auto& golden : cases)
    if (keeps_cache_lines(golden)) keeping.push_back(golden.label);
  ASSERT_EQ(keeping, std::vector<std::string>{"sglang-serve"});
  const GoldenCase& golden = *std::ranges::find(cases, "sglang-serve", &GoldenCase::label);
  auto rendered = render_case(golden, "/usr/bin/gpulaunch");
  ASSERT_TRUE(rendered) << rendered.error().message;
  const LaunchPlan plan = make_launch_plan(rendered->first, launch_options(golden));
  EXPECT_NE(slurp(golden.expected).find(portable(default_cache_lines(plan))), std::string::npos);
}

TEST_P(Golden, SatisfiesItsInlineAssertions) {
  const auto& golden = GetParam();
  auto rendered = render_case(golden, "/usr/bin/gpulaunch");
  ASSERT_TRUE(rendered) << rendered.error().message;
  const auto& [profile, unit] = *rendered;
  std::istringstream input(slurp(golden.input));
  for (std::string line; std::getline(input, line);) {
    if (!line.starts_with("## ")) continue;
    std::istringstream words(line.substr(3));
    std::string verb;
    words >> verb;
    std::string rest;
    std::getline(words >> std::ws, rest);
    SCOPED_TRACE(line);
    if (verb == "assert-key-is") {
      std::istringstream parts(rest);
      std::string section, key, value;
      parts >> section >> key;
      std::getline(parts >> std::ws, value);
      auto values = unit.values(section, key);
      EXPECT_NE(std::find(values.begin(), values.end(), value), values.end());
    } else if (verb == "assert-no-key") {
      std::istringstream parts(rest);
      std::string section, key;
      parts >> section >> key;
      EXPECT_TRUE(unit.values(section, key).empty());
    } else if (verb == "assert-env") {
      std::istringstream parts(rest);
      std::string name, value;
      parts >> name;
      std::getline(parts >> std::ws, value);
      auto values = unit.values("Service", "Environment");
      EXPECT_NE(std::find(values.begin(), values.end(), quote_environment(name, value)),
                values.end());
    } else if (verb == "assert-argv") {
      auto expected = nlohmann::json::parse(rest).get<std::vector<std::string>>();
      EXPECT_EQ(make_launch_plan(profile, launch_options(golden)).argv, expected);
      auto exec = unit.values("Service", "ExecStart");
      ASSERT_EQ(exec.size(), 1u);
      EXPECT_TRUE(exec[0].ends_with(" \"--\" " + exec_command_line(expected)));
    } else if (verb != "node-rank" && verb != "fact" && verb != "golden") {
      ADD_FAILURE() << "unknown assertion '" << verb << "'";
    }
  }
}

// A node root laid out with a golden's "## fact" lines, as `up` would read them there: the engine
// release as its dist-info, InfiniBand under /sys/class/infiniband, a default route through the
// socket interface.
void lay_out_facts(const GoldenCase& golden, const Profile& profile, gl::testing::TempDir& root) {
  const LaunchOptions facts = launch_options(golden);
  if (facts.engine_version) {
    ASSERT_TRUE(profile.engine.venv) << "an engine-version fact needs engine.venv";
    const std::string dist(engine_row(profile.engine.kind).pip_dist);
    root.write(
        profile.engine.venv->substr(1) + "/lib/python3.12/site-packages/" + dist + "-" +
            *facts.engine_version + ".dist-info/METADATA",
        "Metadata-Version: 2.4\nName: " + dist + "\nVersion: " + *facts.engine_version + "\n");
  }
  if (facts.infiniband) root.write("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  if (facts.socket_interface)
    root.write("proc/net/route",
               "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow"
               "\tIRTT\n" +
                   *facts.socket_interface +
                   "\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n");
  ASSERT_TRUE(facts.sandbox.devices.empty() && !facts.sandbox.mps_daemon)
      << "lay out the device and MPS facts here before a golden uses them";
}

// `export NAME=VALUE` as group/remote's shell_quote writes it, back to NAME and VALUE.
std::pair<std::string, std::string> read_export(const std::string& line) {
  const auto equals = line.find('=');
  std::string name = line.substr(7, equals - 7);
  std::string quoted = line.substr(equals + 1);
  if (quoted.empty() || quoted.front() != '\'') return {name, quoted};
  std::string value;
  for (size_t at = 1; at + 1 < quoted.size(); ++at) {
    if (quoted.compare(at, 4, "'\\''") == 0) {
      value += '\'';
      at += 3;
    } else {
      value += quoted[at];
    }
  }
  return {name, value};
}

// The quoted "--env=NAME=VALUE" words of an ExecStart= line (each "..." with \" and \\ escaped,
// as unit/escape's quote_exec_word writes it), as they stand in the line.
std::vector<std::string> podman_env_words(const std::string& line) {
  std::vector<std::string> words;
  for (size_t at = 0; at < line.size(); ++at) {
    if (line[at] != '"') continue;
    size_t end = at + 1;
    while (end < line.size() && line[end] != '"') end += line[end] == '\\' ? 2 : 1;
    std::string word = line.substr(at, end + 1 - at);
    const std::string inner = word.substr(1);
    if (inner.starts_with("--env=") && inner.find('=', 6) != std::string::npos)
      words.push_back(word);
    at = end;
  }
  return words;
}

// `gpulaunch env` on a node with the golden's facts prints exactly the Environment= the golden
// unit holds, rank and all (a multi-node rank's NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME
// included): `env` derives the plan as `up` does. An engine.image unit's Environment= is root's
// podman's (unit_environment's container side); the engine gets env's variables by value in
// podman's command, so for an image env prints exactly the golden ExecStart's --env=NAME=VALUE
// words, in their order.
TEST_P(Golden, EnvPrintsTheUnitsEnvironment) {
  const auto& golden = GetParam();
  DirectorySource source(golden.search);
  auto profile = load_profile(source, golden.input.string());
  ASSERT_TRUE(profile) << profile.error().message;
  gl::testing::TempDir root;
  lay_out_facts(golden, *profile, root);
  const LaunchOptions launch = launch_options(golden);
  const std::string output_file = (root.path() / "env.out").string();
  const std::string command =
      fmt::format("'{}' env '{}' --node-rank {} --root '{}' >'{}' 2>/dev/null", GL_GPULAUNCH_BINARY,
                  golden.input.string(), launch.node_rank, root.path().string(), output_file);
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::vector<std::string> printed;
  std::istringstream output(slurp(output_file));
  for (std::string line; std::getline(output, line);) {
    if (!line.starts_with("export ")) continue;
    auto [name, value] = read_export(line);
    if (profile->engine.image) {
      printed.push_back(portable(quote_exec_word("--env=" + name + "=" + value)));
      continue;
    }
    // A [secrets] variable: the unit names its credential's path through %d.
    const std::string secret = name.ends_with("_PATH") ? name.substr(0, name.size() - 5) : "";
    printed.push_back(portable("Environment=" + (profile->secrets.contains(secret)
                                                     ? credential_path_environment(name, secret)
                                                     : quote_environment(name, value))));
  }
  // The golden's unit with its cache marker put back.
  const LaunchPlan plan = make_launch_plan(*profile, launch);
  std::string unit = slurp(golden.expected);
  const std::string marker = cache_marker(plan);
  if (auto at = unit.find(marker); at != std::string::npos)
    unit.replace(at, marker.size(), default_cache_lines(plan));
  std::vector<std::string> expected;
  std::istringstream lines(unit);
  for (std::string line; std::getline(lines, line);)
    if (profile->engine.image && line.starts_with("ExecStart="))
      expected = podman_env_words(line);
    else if (!profile->engine.image && line.starts_with("Environment="))
      expected.push_back(line);
  if (profile->engine.image) {
    ASSERT_FALSE(expected.empty()) << "no --env=NAME=VALUE in ExecStart=";
  }
  EXPECT_EQ(printed, expected);
}

// What `systemd-analyze VERB` said about a golden case's unit, rendered with the binary just built
// (verify needs the ExecStart binary to exist) into a temporary file.
struct AnalyzeRun {
  int status = -1;
  std::string output;
  std::string unit_name;
};

std::optional<AnalyzeRun> analyze_rendered(const GoldenCase& golden, const std::string& verb) {
  auto rendered = render_case(golden, GL_GPULAUNCH_BINARY);
  if (!rendered) {
    ADD_FAILURE() << rendered.error().message;
    return std::nullopt;
  }
  gl::testing::TempDir dir;
  auto file = dir.write(rendered->first.unit_name(), rendered->second.to_text());
  // The unit Requires= the package's device unit; verify looks for it beside the unit's file.
  const fs::path devices = fs::path(GL_SOURCE_DIR) / "units" / std::string(gl::kNvidiaDevicesUnit);
  dir.write(devices.filename().string(), slurp(devices.string()));
  const std::string log = (dir.path() / "analyze.log").string();
  AnalyzeRun run;
  run.status = std::system(
      ("systemd-analyze " + verb + " '" + file.string() + "' >'" + log + "' 2>&1").c_str());
  run.output = slurp(log);
  run.unit_name = rendered->first.unit_name();
  return run;
}

TEST_P(Golden, PassesSystemdAnalyzeVerify) {
  if (std::system("command -v systemd-analyze >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "systemd-analyze is not installed";
  auto run = analyze_rendered(GetParam(), "verify");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, 0) << run->output;
  EXPECT_EQ(run->output, "");
}

// systemd's own exposure score of every golden unit, InfiniBand's devices and memlock included,
// stays at or below 2.5 (of 10; a hand-written root unit scores about 9.6). An engine image's unit
// runs root's podman (`+`), which no unit sandbox survives; its engine is confined by the
// container instead, which systemd-analyze cannot see: those flags are asserted.
TEST_P(Golden, ExposureScoreAtMost2Point5) {
  if (auto rendered = render_case(GetParam(), GL_GPULAUNCH_BINARY);
      rendered && rendered->first.engine.image) {
    const auto exec = rendered->second.values("Service", "ExecStart");
    ASSERT_EQ(exec.size(), 1u);
    EXPECT_TRUE(exec[0].starts_with("+"));
    for (const char* flag : {"\"--cap-drop=all\"", "\"--security-opt=no-new-privileges\"",
                             "\"--container-user=gpulaunch-"})
      EXPECT_NE(exec[0].find(flag), std::string::npos) << flag << " in " << exec[0];
    EXPECT_EQ(rendered->second.values("Service", "User"),
              std::vector<std::string>{"gpulaunch-" + rendered->first.name});
    return;
  }
  if (std::system("command -v systemd-analyze >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "systemd-analyze is not installed";
  auto run = analyze_rendered(GetParam(), "security --offline=yes");
  ASSERT_TRUE(run);
  const std::string marker = "Overall exposure level for " + run->unit_name + ": ";
  auto at = run->output.find(marker);
  ASSERT_NE(at, std::string::npos) << run->output;
  const double score = std::strtod(run->output.c_str() + at + marker.size(), nullptr);
  EXPECT_LE(score, 2.5) << run->output;
}

INSTANTIATE_TEST_SUITE_P(Units, Golden, ::testing::ValuesIn(golden_cases()), [](const auto& info) {
  std::string name = info.param.label;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
});

}  // namespace
}  // namespace gl
