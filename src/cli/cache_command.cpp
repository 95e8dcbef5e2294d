// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/core.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "caches/cache_digest.hpp"
#include "caches/cache_export.hpp"
#include "caches/cache_import.hpp"
#include "caches/cache_owner.hpp"
#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "caches/fingerprint_facts.hpp"
#include "caches/prepare.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/profile_lookup.hpp"
#include "plan/launch_plan.hpp"
#include "profile/service_user.hpp"
#include "profile/validate.hpp"
#include "rules/node_probe.hpp"
#include "util/atomic_file.hpp"
#include "util/byte_size.hpp"
#include "util/did_you_mean.hpp"
#include "util/state_paths.hpp"
#include "util/system_users.hpp"
#include "util/terminal_text.hpp"
#include "util/try.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {

Result<LaunchPlan> plan_for(const CliContext& context, const std::string& name, Profile* out) {
  GL_TRY(auto profile, load_profile_or_installed(context, name));
  auto plan = make_launch_plan(profile);
  *out = std::move(profile);
  return plan;
}

// Cache names typed on the command line, checked before anything is read: an unknown one is a
// usage error (exit 2) with the closest name.
Result<void> check_cache_names(const LaunchPlan& plan, const std::vector<std::string>& names) {
  std::vector<std::string> known;
  for (const auto& location : plan.caches) known.push_back(location.name);
  for (const auto& name : names)
    if (std::find(known.begin(), known.end(), name) == known.end())
      return failf("Unknown cache '{}'{}; known: {}", name, did_you_mean_suffix(name, known),
                   fmt::format("{}", fmt::join(known, ", ")));
  return {};
}

// Where root's state is kept: state_paths' place, or a test's (hidden --state-root).
std::string state_root{state_paths::kStateRoot};

int list_caches(const CliContext& context, const std::string& name) {
  Profile profile;
  auto plan = plan_for(context, name, &profile);
  if (!plan) return report(plan.error(), kExitUsage);
  auto state = inspect_caches(
      *plan,
      fingerprint_inputs(profile, *plan,
                         probe_node_for(profile, *plan, ShellEnvironment::current())),
      cache_records_directory(profile.name, state_root));
  if (!state) return report(state.error());
  fmt::print("cache root  {}\n", state->root);
  fmt::print("fingerprint {}", state->fingerprint);
  if (!state->stamped)
    fmt::print(" (not stamped yet)\n");
  else if (*state->stamped == state->fingerprint)
    fmt::print(" (stamped)\n");
  else
    fmt::print(" (stamped {}: {})\n", *state->stamped, state->change);
  size_t name_width = 4, path_width = 4;
  for (const auto& cache : state->caches) {
    name_width = std::max(name_width, cache.name.size());
    path_width = std::max(path_width, cache.path.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:>10}  {:<7}  {}\n", "NAME", name_width, "PATH", path_width, "SIZE",
             "STATE", "KEYS ITSELF");
  for (const auto& cache : state->caches)
    fmt::print(
        "{:<{}}  {:<{}}  {:>10}  {:<7}  {}\n", cache.name, name_width, cache.path, path_width,
        cache.usage.exists && cache.state != CacheState::foreign ? format_bytes(cache.usage.bytes)
                                                                 : "-",
        cache_state_name(cache.state),
        cache.keys_itself ? std::string("yes")
        : cache.stale_on.empty()
            ? std::string("no")
            : fmt::format("no (stale on {})", fmt::join(cache.stale_on, ", ")));
  for (const auto& cache : state->caches)
    for (const auto& copy : cache.quarantined)
      fmt::print(
          "{}: quarantined copy {} (a crash's traceback ran through it; inspect, then "
          "remove it by hand)\n",
          cache.name, terminal_text(copy));
  for (const auto& cache : state->caches)
    if (cache.state == CacheState::foreign)
      fmt::print(
          "{}: '{}' was not created by gpulaunch and is outside the cache root: starts and "
          "clears refuse it\n",
          cache.name, cache.path);
  return 0;
}

// What `up --all-nodes` compares between ranks (caches/cache_agreement): each cache's fingerprint
// and content digest on this node, as JSON.
int digest_caches(const CliContext& context, const std::string& name) {
  Profile profile;
  auto plan = plan_for(context, name, &profile);
  if (!plan) return report(plan.error(), kExitUsage);
  const auto inputs = fingerprint_inputs(
      profile, *plan, probe_node_for(profile, *plan, ShellEnvironment::current()));
  auto digests = cache_digests(*plan, inputs, cache_records_directory(profile.name, state_root));
  if (!digests) return report(digests.error());
  nlohmann::ordered_json json;
  json["profile"] = profile.name;
  json["cache_root"] = plan->cache_root;
  json["fingerprint"] = fingerprint_hex(fingerprint_hash(inputs));
  json["caches"] = cache_digests_json(*digests);
  fmt::print("{}\n", json.dump(2));
  return 0;
}

int clear(const CliContext& context, const std::string& name,
          const std::vector<std::string>& names) {
  Profile profile;
  auto plan = plan_for(context, name, &profile);
  if (!plan) return report(plan.error(), kExitUsage);
  if (auto known = check_cache_names(*plan, names); !known)
    return report(known.error(), kExitUsage);
  size_t count = 0;
  auto records = cache_records_directory(profile.name, state_root);
  auto removals = clear_caches(*plan, names, records, [&](const Removal& removal) {
    ++count;
    fmt::print("removed {} ({}): {}\n", terminal_text(removal.what), format_bytes(removal.bytes),
               terminal_text(removal.why));
  });
  if (!removals) return report(removals.error());
  if (count == 0) fmt::print("nothing to clear\n");
  return 0;
}

FingerprintInputs node_inputs(const Profile& profile, const LaunchPlan& plan) {
  return fingerprint_inputs(profile, plan,
                            probe_node_for(profile, plan, ShellEnvironment::current()));
}

// `cache export NAME [CACHE...] -o FILE`: the archive is written beside FILE and renamed over
// it, so a refused or interrupted export leaves no half archive. `-o -` writes it to stdout (what
// `up --all-nodes` streams into another rank's `cache import NAME -`), and the report to stderr;
// a refusal there exits non-zero, so the reader refuses the truncated archive.
int export_archive(const CliContext& context, const std::string& name,
                   const std::vector<std::string>& names, const std::string& output) {
  Profile profile;
  auto plan = plan_for(context, name, &profile);
  if (!plan) return report(plan.error(), kExitUsage);
  if (auto known = check_cache_names(*plan, names); !known)
    return report(known.error(), kExitUsage);
  const auto inputs = node_inputs(profile, *plan);
  const bool to_stdout = output == "-";
  if (to_stdout && ::isatty(STDOUT_FILENO))
    return report(Error{"gpulaunch cache export: refusing to write an archive to a terminal"}, 2);
  ArchiveManifest manifest;
  const auto write = [&](int fd) -> Result<void> {
    GL_TRY(manifest, export_caches(*plan, profile.name, inputs,
                                   cache_records_directory(profile.name, state_root), names, fd,
                                   to_stdout ? std::string("stdout") : output));
    if (manifest.caches.empty())
      return failf("Failed to export '{}': no cache of profile '{}' holds files", output,
                   profile.name);
    return {};
  };
  auto written = to_stdout ? write(STDOUT_FILENO) : write_file_atomically_with(output, write);
  if (!written) return report(written.error());
  std::FILE* said = to_stdout ? stderr : stdout;
  for (const auto& cache : manifest.caches)
    fmt::print(said, "exported {}: {} file(s), {} (fingerprint {}, digest {})\n", cache.name,
               cache.files, format_bytes(cache.bytes), cache.fingerprint,
               cache.digest.substr(0, 12));
  fmt::print(said, "wrote {}\n", to_stdout ? std::string("stdout") : terminal_text(output));
  return 0;
}

// `cache import NAME FILE`, as root: the service user's caches and root's records change.
int import_archive(const CliContext& context, const std::string& name, const std::string& file) {
  if (::geteuid() != 0)
    return report(Error{"gpulaunch cache import: run it as root (it writes the service user's "
                        "caches and root's records of them)"},
                  2);
  Profile profile;
  auto plan = plan_for(context, name, &profile);
  if (!plan) return report(plan.error(), kExitUsage);
  // A node that never ran the profile (the one `up --all-nodes` seeds) has no user yet: made as
  // `up` makes it (profile/service_user), so the caches are the engine's from the start.
  if (service_user_is_default(profile) && state_root == state_paths::kStateRoot) {
    auto users = node_system_users();
    auto made =
        ensure_system_user(*users, service_user(profile), "gpulaunch engine " + profile.name,
                           std::string(state_paths::kStateRoot));
    if (!made) return report(made.error());
  }
  auto owner = cache_owner(profile);
  if (!owner) return report(owner.error());
  // `-`: the archive is stdin, a pipe (`up --all-nodes` streams another rank's export into it);
  // read once, front to back, as a file is.
  const bool from_stdin = file == "-";
  const std::string shown = from_stdin ? std::string("stdin") : file;
  UniqueFd opened;
  if (!from_stdin) {
    // O_NONBLOCK: a FIFO named as the archive is refused below instead of blocking the open.
    opened = UniqueFd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!opened)
      return report(Error{fmt::format("Failed to open '{}': {}", file, std::strerror(errno))});
  }
  const int fd = from_stdin ? STDIN_FILENO : opened.get();
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !(S_ISREG(info.st_mode) || (from_stdin && S_ISFIFO(info.st_mode))))
    return report(Error{fmt::format("Failed to import '{}': not a regular file{}", shown,
                                    from_stdin ? " or a pipe" : "")});
  const ImportOptions options{{cache_records_directory(profile.name, state_root), *owner}, {}};
  auto imported = import_caches(
      *plan, node_inputs(profile, *plan), options, fd, shown, [](const Removal& removal) {
        fmt::print("removed {} ({}): {}\n", terminal_text(removal.what),
                   format_bytes(removal.bytes), terminal_text(removal.why));
      });
  if (!imported) return report(imported.error());
  for (const auto& cache : imported->caches)
    fmt::print("imported {} into {}: {} file(s), {}{}\n", cache.name, cache.path, cache.files,
               format_bytes(cache.bytes),
               cache.replaced_entries > 0
                   ? fmt::format(" (the {} entries it held before removed)", cache.replaced_entries)
                   : std::string());
  fmt::print("from profile '{}' of {}; fingerprint stamped {}\n", terminal_text(imported->profile),
             terminal_text(shown), imported->prepared.fingerprint);
  return 0;
}

}  // namespace

void add_cache_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "cache",
      "List a profile's JIT caches with size and state, clear them (cache clear), or carry them "
      "to another node (cache export, cache import)");
  static std::string name;
  command->add_option("profile", name, "Profile name or path to a .toml file")
      ->check(profile_argument_check());
  command->add_option("--state-root", state_root, "Where root keeps its state (tests)")->group("");
  static bool json = false;
  command->add_flag("--json", json,
                    "Print each cache's fingerprint and content digest as JSON (reads every "
                    "file of the caches)");
  auto* clear_command = command->add_subcommand("clear", "Empty a profile's JIT caches now");
  static std::string clear_name;
  static std::vector<std::string> cache_names;
  clear_command->add_option("profile", clear_name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  clear_command->add_option("names", cache_names, "Caches to clear (default: all)");
  clear_command->add_option("--state-root", state_root, "Where root keeps its state (tests)")
      ->group("");
  clear_command->callback(
      [&context] { context.exit_code = clear(context, clear_name, cache_names); });
  auto* export_command = command->add_subcommand(
      "export",
      "Write a profile's compiled caches into one archive, with each cache's fingerprint facts "
      "and content digest, for `cache import` on another node");
  static std::string export_name, output;
  static std::vector<std::string> export_names;
  export_command->add_option("profile", export_name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  export_command->add_option("names", export_names, "Caches to export (default: all with files)");
  export_command
      ->add_option("-o,--output", output, "The archive to write (tar, zstd); - for stdout")
      ->required();
  export_command->add_option("--state-root", state_root, "Where root keeps its state (tests)")
      ->group("");
  export_command->callback([&context] {
    context.exit_code = export_archive(context, export_name, export_names, output);
  });
  auto* import_command = command->add_subcommand(
      "import",
      "As root: put the caches of an archive from `cache export` in place of this profile's, "
      "refusing a cache compiled for other facts than this node's or whose content does not "
      "match its digest");
  static std::string import_name, archive;
  import_command->add_option("profile", import_name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  import_command
      ->add_option("archive", archive, "An archive `gpulaunch cache export` wrote; - for stdin")
      ->required();
  import_command->add_option("--state-root", state_root, "Where root keeps its state (tests)")
      ->group("");
  import_command->callback(
      [&context] { context.exit_code = import_archive(context, import_name, archive); });
  command->callback([&context, clear_command, export_command, import_command] {
    if (clear_command->parsed() || export_command->parsed() || import_command->parsed()) return;
    if (name.empty()) {
      context.exit_code = report(Error{"gpulaunch cache: a profile is required"}, 2);
      return;
    }
    context.exit_code = json ? digest_caches(context, name) : list_caches(context, name);
  });
}

}  // namespace gl
