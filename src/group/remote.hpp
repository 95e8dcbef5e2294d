// SPDX-License-Identifier: Apache-2.0
#pragma once
// A multi-node profile's ranks, reached with the system's OpenSSH client: the argv for
// `ssh HOST gpulaunch ...`, and running one command on every rank at once. No agent of our own:
// each node runs the same gpulaunch, as `up` would there.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

inline constexpr std::string_view kSystemSsh = "/usr/bin/ssh";

// POSIX shell single quoting, for the command line ssh hands the remote shell.
std::string shell_quote(std::string_view word);

// ssh's arguments (without the program) to run `remote_args` on `host`: BatchMode (never a
// prompt), the profile's user, port, identity and known_hosts, StrictHostKeyChecking=yes always
// (against the profile's known_hosts, or the system's when it names none), then the remote command,
// quoted, with its stderr joined to stdout so failures come back (unless `join_stderr` is false:
// a command whose stdout is data another rank reads keeps its messages on stderr).
std::vector<std::string> ssh_args(const NodesSettings& nodes, const std::string& host,
                                  const std::vector<std::string>& remote_args,
                                  bool join_stderr = true);

struct RankResult {
  long long rank = 0;
  std::string host;
  int exit_code = -1;  // 255: ssh itself failed (unreachable, refused, host key)
  std::string output;
  std::string error;     // the command could not be run or timed out
  bool skipped = false;  // no command for this rank (the caller's own)

  bool ok() const { return error.empty() && exit_code == 0; }
};

// Runs `args_per_rank[rank]` on every host at once over `ssh_program`, waiting for all; results
// in rank order. A rank whose args are empty is skipped.
std::vector<RankResult> run_on_all_ranks(const NodesSettings& nodes, const std::string& ssh_program,
                                         const std::vector<std::vector<std::string>>& args_per_rank,
                                         std::chrono::milliseconds timeout);

// How the group's steps reach its ranks: every rank's command at once, results in rank order, an
// empty command skipped. Production runs them over ssh (ssh_rank_runner); tests script answers.
class RankRunner {
 public:
  virtual ~RankRunner() = default;
  virtual std::vector<RankResult> run(const std::vector<std::vector<std::string>>& args_per_rank,
                                      std::chrono::milliseconds timeout) = 0;
  // `source_args` on rank `from`, its stdout streamed into `target_args`' stdin on rank `to`
  // (through this process: the ranks need not reach each other). `source` carries what the
  // source printed on stderr, `target` what the target printed; each names its own rank.
  struct Streamed {
    RankResult source;
    RankResult target;
    bool ok() const { return source.ok() && target.ok(); }
  };
  virtual Streamed stream(long long from, const std::vector<std::string>& source_args, long long to,
                          const std::vector<std::string>& target_args,
                          std::chrono::milliseconds timeout) = 0;
};

// run_on_all_ranks over `ssh_program`, for the profile's `nodes`.
std::unique_ptr<RankRunner> ssh_rank_runner(NodesSettings nodes, std::string ssh_program);

}  // namespace gl
