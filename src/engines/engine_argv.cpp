// SPDX-License-Identifier: Apache-2.0
#include "engines/engine_argv.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/core.h>

#include "catalog/containers.hpp"
#include "catalog/engine_knobs.hpp"
#include "catalog/shared_engine_flags.hpp"
#include "util/version.hpp"

namespace gl {
namespace {

// Engines whose command line is nothing but the row's flags.
std::vector<std::string> flags_only_argv(const Profile& profile, const LaunchOptions& options) {
  const EngineRow& row = engine_row(profile.engine.kind);
  std::vector<std::string> argv = engine_launcher(profile, options);
  auto add = [&](std::string_view flag, std::string value) {
    argv.emplace_back(flag);
    argv.push_back(std::move(value));
  };
  if (row.model_flag.empty())
    argv.push_back(profile.model.path);
  else
    add(row.model_flag, profile.model.path);
  argv.insert(argv.end(), row.fixed_args.begin(), row.fixed_args.end());
  add_server_flags(argv, profile, false);
  add_knob_flags(argv, profile, options);
  return argv;
}

}  // namespace

void add_parallel_size_flags(std::vector<std::string>& argv, const ParallelismSettings& p) {
  argv.emplace_back(kTensorParallelSizeFlag);
  argv.push_back(std::to_string(p.tp));
  if (p.pp <= 1) return;
  argv.emplace_back(kPipelineParallelSizeFlag);
  argv.push_back(std::to_string(p.pp));
}

void add_server_flags(std::vector<std::string>& argv, const Profile& profile, bool revision) {
  const EngineRow& row = engine_row(profile.engine.kind);
  auto add = [&](std::string_view flag, std::string value) {
    argv.emplace_back(flag);
    argv.push_back(std::move(value));
  };
  add(row.host_flag, profile.server.host);
  add(row.port_flag, std::to_string(profile.server.port));
  if (profile.model.served_name && !row.served_name_flag.empty())
    add(row.served_name_flag, *profile.model.served_name);
  if (revision && profile.model.revision) add(kModelRevisionFlag, *profile.model.revision);
}

void add_knob_flags(std::vector<std::string>& argv, const Profile& profile,
                    const LaunchOptions& options) {
  for (const EngineKnobKey& knob : engine_knob_keys()) {
    auto value = profile.engine.knob(knob.key);
    std::string_view flag = engine_knob_flag(knob, profile.engine.kind);
    if (!value || flag.empty()) continue;  // the cross rules refused a key without a flag
    argv.push_back(fitted_flag(profile.engine.kind, flag, options));
    argv.push_back(engine_knob_argument(knob, *value));
  }
}

std::string venv_program(const Profile& profile, const std::string& program) {
  if (profile.engine.venv) return *profile.engine.venv + "/bin/" + program;
  if (program == "python" && profile.engine.python) return *profile.engine.python;
  // An image's own interpreter (catalog/containers); its programs are on the image's PATH.
  if (program == "python" && profile.engine.image) return std::string(kImagePythonInterpreter);
  return program;
}

namespace {

// The serve script only from a venv whose installed version is known to have it: an unknown
// version (`render` without --engine-version, a venv without dist-info) or an interpreter named by
// engine.python (whose bin/ may hold another install's script) keeps `-m MODULE`, which every
// release takes.
bool uses_serve_script(const EngineRow& row, const Profile& profile, const LaunchOptions& options) {
  if (row.serve_script.program.empty() || !profile.engine.venv || !options.engine_version)
    return false;
  auto installed = parse_version(*options.engine_version);
  auto since = parse_version(row.serve_script.since);
  return installed && since && *installed >= *since;
}

// The engine's own drain bound (catalog/engines' DrainFacts) from server.drain_timeout, where the
// installed release is known to take the flag (an older one would refuse its command line) and
// engine.args does not set it already.
bool passes_drain_flag(const EngineRow& row, const Profile& profile, const LaunchOptions& options) {
  if (row.drain.flag.empty()) return false;
  const FlagSpelling fit = spell_flag(row.kind, row.drain.flag, options.engine_version);
  if (fit.version_unknown || fit.spelling.empty()) return false;
  const std::string with_value = std::string(row.drain.flag) + "=";
  return std::none_of(
      profile.engine.args.begin(), profile.engine.args.end(),
      [&](const std::string& arg) { return arg == row.drain.flag || arg.starts_with(with_value); });
}

}  // namespace

std::vector<std::string> engine_launcher(const Profile& profile, const LaunchOptions& options) {
  const EngineRow& row = engine_row(profile.engine.kind);
  const std::string program(row.program);
  switch (row.launch) {
    case Launch::python_module:
      if (uses_serve_script(row, profile, options))
        return {venv_program(profile, std::string(row.serve_script.program)),
                std::string(row.serve_script.subcommand)};
      return {venv_program(profile, "python"), "-m", program};
    case Launch::venv_program:
      return {profile.engine.executable.value_or(venv_program(profile, program))};
    case Launch::executable:
      return {profile.engine.executable.value_or(program)};
    case Launch::argv:
      break;
  }
  return {};
}

std::string_view rank_role_name(RankRole role) {
  return role == RankRole::headless ? "headless" : "serving";
}

RankRole rank_role(const Profile& profile, long long node_rank) {
  const MultiNodeFlags* flags = engine_row(profile.engine.kind).multi_node_flags;
  const bool headless_ranks = flags && !flags->headless.empty();
  return profile.parallelism.nodes > 1 && node_rank > 0 && headless_ranks ? RankRole::headless
                                                                          : RankRole::serving;
}

std::string rendezvous_text(const Rendezvous& rendezvous) {
  return rendezvous.host.find(':') != std::string::npos
             ? fmt::format("[{}]:{}", rendezvous.host, rendezvous.port)
             : fmt::format("{}:{}", rendezvous.host, rendezvous.port);
}

std::pair<std::string, std::string> split_host_port(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return {address, ""};
  std::string host = address.substr(0, colon);
  // torch.distributed and ZMQ take an IPv6 address bare: "[fd00::1]:5000" -> "fd00::1".
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return {host, address.substr(colon + 1)};
}

std::optional<Rendezvous> headless_rendezvous(const Profile& profile,
                                              const LaunchOptions& options) {
  if (rank_role(profile, options.node_rank) != RankRole::headless) return std::nullopt;
  const auto& p = profile.parallelism;
  if (!p.dist_init_addr) return std::nullopt;
  auto [host, port] = split_host_port(*p.dist_init_addr);
  const MultiNodeFlags& flags = *engine_row(profile.engine.kind).multi_node_flags;
  Rendezvous rendezvous{host, 0, p.dp > 1 && flags.dp_joins_any_port};
  const auto [end, error] =
      std::from_chars(port.data(), port.data() + port.size(), rendezvous.port);
  // Validation has refused such an address already.
  if (error != std::errc{} || end != port.data() + port.size()) return std::nullopt;
  return rendezvous;
}

std::string fitted_flag(EngineKind kind, std::string_view flag, const LaunchOptions& options) {
  const FlagSpelling fit = spell_flag(kind, flag, options.engine_version);
  return std::string(fit.spelling.empty() ? flag : fit.spelling);
}

std::vector<FittedFlag> fitted_flags(const Profile& profile, const LaunchOptions& options) {
  Profile own = profile;
  own.engine.args.clear();
  std::vector<FittedFlag> fitted;
  // Built with every release's newest spelling: the words name the table's rows.
  LaunchOptions newest = options;
  newest.engine_version = "999999";
  for (const auto& word : engine_argv(own, newest)) {
    if (!find_flag_versions(profile.engine.kind, word)) continue;
    // The drain bound is left out where the release lacks it (passes_drain_flag): never needed.
    if (word == engine_row(profile.engine.kind).drain.flag) continue;
    if (std::ranges::any_of(fitted, [&](const FittedFlag& f) { return f.flag == word; })) continue;
    const FlagSpelling fit = spell_flag(profile.engine.kind, word, options.engine_version);
    fitted.push_back(
        {word, std::string(fit.spelling), std::string(fit.needs), fit.version_unknown});
  }
  return fitted;
}

std::vector<std::string> engine_argv(const Profile& profile, const LaunchOptions& options) {
  std::vector<std::string> argv;
  switch (engine_row(profile.engine.kind).argv) {
    case ArgvBuilder::sglang:
      argv = sglang_argv(profile, options);
      break;
    case ArgvBuilder::vllm:
      argv = vllm_argv(profile, options);
      break;
    case ArgvBuilder::trtllm:
      argv = trtllm_argv(profile, options);
      break;
    case ArgvBuilder::command:
      argv = profile.engine.argv;
      break;
    case ArgvBuilder::flags_only:
      argv = flags_only_argv(profile, options);
      break;
  }
  const EngineRow& row = engine_row(profile.engine.kind);
  if (row.argv != ArgvBuilder::command && passes_drain_flag(row, profile, options)) {
    argv.emplace_back(row.drain.flag);
    argv.push_back(std::to_string(profile.server.drain_timeout.count()));
  }
  // The profile's own arguments come last so they can override anything above.
  argv.insert(argv.end(), profile.engine.args.begin(), profile.engine.args.end());
  return argv;
}

}  // namespace gl
