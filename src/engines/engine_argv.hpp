// SPDX-License-Identifier: Apache-2.0
#pragma once
// The engine's command line, built from the profile with each engine's full flag names
// (field-facts section 6).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/sandbox_allowances.hpp"
#include "profile/profile.hpp"

namespace gl {

struct LaunchOptions {
  long long node_rank = 0;
  // The engine's version as engine.venv's dist-info METADATA says (read as a file, never run),
  // where the command has read it: `up`, `lock` and `verify` do; `render` takes it as
  // --engine-version, so the same inputs always give the same unit. It picks the row's
  // serve_script and whether the row's drain flag is passed (server.drain_timeout); nullopt keeps
  // the launcher and flags every release accepts.
  std::optional<std::string> engine_version = std::nullopt;
  // The node has InfiniBand (Facts::has_infiniband, read from /sys/class/infiniband): the unit
  // allows its devices and sets what RDMA needs. `render` takes it as --infiniband.
  bool infiniband = false;
  // The optional devices and MPS daemon the node has (Facts::sandbox_node, catalog/
  // sandbox_allowances): the unit opens them. `render` takes them as --device and --mps.
  SandboxNode sandbox = {};
  // The interface this node routes to the group's rendezvous through (facts/routes): a
  // multi-node unit pins NCCL's and Gloo's sockets to it unless the profile's [env] does. `up`
  // reads it; `render` takes it as --socket-interface.
  std::optional<std::string> socket_interface = std::nullopt;
  // The engine's HOME and working directory where no unit's StateDirectory= makes it: `run
  // --foreground`'s state directory's engine/. Empty: state_paths::engine_home.
  std::string engine_home = {};
};

std::vector<std::string> engine_argv(const Profile& profile, const LaunchOptions& options = {});

// `flag` as the installed release (options.engine_version) spells it (catalog/engines'
// spell_flag): the conservative spelling where the version is unknown, `flag` itself where that
// release has none (`check` refuses such a profile: fitted_flags).
std::string fitted_flag(EngineKind kind, std::string_view flag, const LaunchOptions& options);

// Each flag the builders add to this profile's command line (engine.args left out: those are
// the user's) whose spelling depends on the release: what `options.engine_version` made of it.
struct FittedFlag {
  std::string flag;      // the spelling current releases take
  std::string spelling;  // the one the command line uses; empty: that release has none
  std::string needs;     // the first release with `flag`
  bool version_unknown = false;
};
std::vector<FittedFlag> fitted_flags(const Profile& profile, const LaunchOptions& options);

// What one rank of a multi-node group offers: `serving` answers the health endpoint; `headless`
// (ranks >= 1 of an engine whose row names a headless flag) runs its share of the model and no
// HTTP server, and has joined the group once it holds a TCP connection to rank 0.
enum class RankRole { serving, headless };
std::string_view rank_role_name(RankRole role);
RankRole rank_role(const Profile& profile, long long node_rank);

// Where a headless rank's engine connects: rank 0's host from parallelism.dist_init_addr (bare,
// IPv6 without brackets) and port; any_port where the row says a data-parallel rank holds its
// connections to rank 0 on other ports (catalog/engines, MultiNodeFlags::dp_joins_any_port).
struct Rendezvous {
  std::string host;
  long long port = 0;
  bool any_port = false;

  bool operator==(const Rendezvous&) const = default;
};
// nullopt for a serving rank.
std::optional<Rendezvous> headless_rendezvous(const Profile& profile, const LaunchOptions& options);
// "host:port", IPv6 in brackets: how `run`'s option and people's messages write it.
std::string rendezvous_text(const Rendezvous& rendezvous);
// "host:port" -> bare host and port; "[v6]:port" -> v6 and port.
std::pair<std::string, std::string> split_host_port(const std::string& address);

// Per engine whose flags need logic; engine_argv picks one by the row's ArgvBuilder
// (catalog/engines), and builds the command line of a flags_only row itself.
std::vector<std::string> sglang_argv(const Profile& profile, const LaunchOptions& options);
std::vector<std::string> vllm_argv(const Profile& profile, const LaunchOptions& options);
std::vector<std::string> trtllm_argv(const Profile& profile, const LaunchOptions& options);

// The interpreter or launcher inside the profile's venv, or the one the profile names.
std::string venv_program(const Profile& profile, const std::string& program);
// The words that start the engine, as its row's Launch says: "PYTHON -m MODULE" (or the venv's
// serve script and its subcommand, where options.engine_version has it), the venv's program or
// engine.executable; empty for kind = "command".
std::vector<std::string> engine_launcher(const Profile& profile, const LaunchOptions& options);
// SGLang's and vLLM's shared flags (catalog/shared_engine_flags): the tensor-parallel size, and the
// pipeline-parallel size where there is more than one stage.
void add_parallel_size_flags(std::vector<std::string>& argv, const ParallelismSettings& p);
// The server's address and the model's names, as the row spells them: host, port, the served name
// where the row has a flag for it, and the revision where `revision` (SGLang, vLLM).
void add_server_flags(std::vector<std::string>& argv, const Profile& profile, bool revision);
// The flag and value of each pass-through key the profile sets (catalog/engine_knobs), in the
// table's order and the spelling the installed release takes; every builder calls it once.
void add_knob_flags(std::vector<std::string>& argv, const Profile& profile,
                    const LaunchOptions& options);

}  // namespace gl
