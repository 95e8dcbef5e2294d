// SPDX-License-Identifier: Apache-2.0
#include "group/remote.hpp"

#include <thread>

#include <fmt/core.h>

#include "util/process.hpp"

namespace gl {

std::string shell_quote(std::string_view word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_-./=:,@+") == std::string_view::npos)
    return std::string(word);
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::vector<std::string> ssh_args(const NodesSettings& nodes, const std::string& host,
                                  const std::vector<std::string>& remote_args, bool join_stderr) {
  std::vector<std::string> args{
      "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-p", std::to_string(nodes.ssh_port)};
  if (nodes.ssh_identity) {
    args.insert(args.end(), {"-i", *nodes.ssh_identity, "-o", "IdentitiesOnly=yes"});
  }
  if (nodes.ssh_known_hosts)
    args.insert(args.end(), {"-o", "UserKnownHostsFile=" + *nodes.ssh_known_hosts});
  // Always, whatever ssh_config says: a host whose key is not already known (the profile's
  // known_hosts, else the system's) is refused, never learned, since it would then be told to act
  // as root (peer-failed, up, down).
  args.insert(args.end(), {"-o", "StrictHostKeyChecking=yes"});
  if (nodes.ssh_user) args.insert(args.end(), {"-l", *nodes.ssh_user});
  // An IPv6 literal is written [addr] in profiles; ssh wants it bare.
  std::string target = host;
  if (target.size() > 2 && target.front() == '[' && target.back() == ']')
    target = target.substr(1, target.size() - 2);
  args.push_back(target);
  args.push_back("--");
  std::string command = shell_quote(nodes.gpulaunch);
  for (const auto& arg : remote_args) command += " " + shell_quote(arg);
  args.push_back(join_stderr ? command + " 2>&1" : command);
  return args;
}

std::vector<RankResult> run_on_all_ranks(const NodesSettings& nodes, const std::string& ssh_program,
                                         const std::vector<std::vector<std::string>>& args_per_rank,
                                         std::chrono::milliseconds timeout) {
  const auto& hosts = nodes.hosts;
  std::vector<RankResult> results(hosts.size());
  {
    std::vector<std::jthread> workers;
    for (size_t rank = 0; rank < hosts.size() && rank < args_per_rank.size(); ++rank) {
      workers.emplace_back([&, rank] {
        RankResult& result = results[rank];
        result.rank = static_cast<long long>(rank);
        result.host = hosts[rank];
        if (args_per_rank[rank].empty()) {
          result.skipped = true;
          return;
        }
        auto ran =
            run_process(ssh_program, ssh_args(nodes, hosts[rank], args_per_rank[rank]), timeout);
        if (!ran) {
          result.error = ran.error().message;
          return;
        }
        result.exit_code = ran->exit_code;
        result.output = std::move(ran->out);
      });
    }
  }
  return results;
}

namespace {
class SshRankRunner final : public RankRunner {
 public:
  SshRankRunner(NodesSettings nodes, std::string ssh_program)
      : nodes_(std::move(nodes)), ssh_program_(std::move(ssh_program)) {}
  std::vector<RankResult> run(const std::vector<std::vector<std::string>>& args_per_rank,
                              std::chrono::milliseconds timeout) override {
    return run_on_all_ranks(nodes_, ssh_program_, args_per_rank, timeout);
  }
  // ssh to `from` | ssh to `to`: the source's stdout is the archive, so its stderr stays apart.
  Streamed stream(long long from, const std::vector<std::string>& source_args, long long to,
                  const std::vector<std::string>& target_args,
                  std::chrono::milliseconds timeout) override {
    Streamed streamed;
    streamed.source.rank = from;
    streamed.source.host = nodes_.hosts.at(static_cast<size_t>(from));
    streamed.target.rank = to;
    streamed.target.host = nodes_.hosts.at(static_cast<size_t>(to));
    auto ran =
        run_pipeline(ssh_program_, ssh_args(nodes_, streamed.source.host, source_args, false),
                     ssh_args(nodes_, streamed.target.host, target_args), timeout);
    if (!ran) {
      streamed.source.error = streamed.target.error = ran.error().message;
      return streamed;
    }
    streamed.source.exit_code = ran->source_exit;
    streamed.source.output = std::move(ran->source_err);
    streamed.target.exit_code = ran->target_exit;
    streamed.target.output = std::move(ran->target_out);
    return streamed;
  }

 private:
  NodesSettings nodes_;
  std::string ssh_program_;
};
}  // namespace

std::unique_ptr<RankRunner> ssh_rank_runner(NodesSettings nodes, std::string ssh_program) {
  return std::make_unique<SshRankRunner>(std::move(nodes), std::move(ssh_program));
}

}  // namespace gl
