// SPDX-License-Identifier: Apache-2.0
// Hidden `rendezvous-probe PROFILE --node-rank N`: what `up --all-nodes` runs on every rank at
// once before a group starts. Rank 0 listens on the group's rendezvous port for the other ranks;
// each other rank connects to it (group/rendezvous_probe). One line out; exit 0 when this rank's
// part succeeded.

#include <chrono>

#include <fmt/core.h>

#include "cli/all_nodes.hpp"
#include "cli/context.hpp"
#include "group/rendezvous_probe.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

// Rank 0 listens this much longer than the others try, so it is still there for their last try.
constexpr auto kListenMargin = std::chrono::seconds(2);

int probe(const CliContext& context, const std::string& name, long long rank, double within_s) {
  auto profile = load_profile(context.profile_source(), name);
  if (!profile) return report(profile.error());
  auto rendezvous = group_rendezvous(*profile);
  if (!rendezvous)
    return report(Error{fmt::format("profile '{}' has no rendezvous address "
                                    "('parallelism.dist_init_addr')",
                                    profile->name)},
                  2);
  const auto within = std::chrono::milliseconds(static_cast<long long>(within_s * 1000));
  if (rank == 0) {
    std::vector<long long> expected;
    for (long long peer = 1; peer < profile->parallelism.nodes; ++peer) expected.push_back(peer);
    auto listened =
        listen_for_ranks(rendezvous->host, rendezvous->port, expected, within + kListenMargin);
    if (!listened) return report(listened.error());
    fmt::print("{}\n", listen_line(rendezvous->port, *listened, expected));
    // A rank that did not connect says why itself; rank 0 fails only for its own port.
    return listened->port_in_use ? 1 : 0;
  }
  auto reached = reach_rendezvous(rendezvous->host, rendezvous->port, rank, within);
  fmt::print("{}\n", reach_line(rendezvous_text(*rendezvous), reached));
  return reached.reached() ? 0 : 1;
}

}  // namespace

void add_rendezvous_probe_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "rendezvous-probe", "Test this rank's TCP path to rank 0's rendezvous port (up --all-nodes)");
  command->group("");  // `up --all-nodes` runs it on every rank
  static std::string name;
  static long long rank = 0;
  static double within = 10;
  command->add_option("profile", name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  command->add_option("--node-rank", rank, "This node's rank")->required();
  command->add_option("--within", within, "Seconds to keep trying (default 10)")
      ->check(CLI::Range(0.5, 300.0));
  command->callback([&context] { context.exit_code = probe(context, name, rank, within); });
}

}  // namespace gl
