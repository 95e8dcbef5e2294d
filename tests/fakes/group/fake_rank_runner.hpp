// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ranks of a group in memory: each command a rank is given is recorded (what an operator
// would see run there) and answered by a scripted function of the rank and the command, the way
// the remote gpulaunch would answer over ssh.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "group/remote.hpp"

namespace gl::testing {

class FakeRankRunner final : public RankRunner {
 public:
  struct Answer {
    int exit_code = 0;
    std::string output;
    std::string error;  // the command could not be run (e.g. timed out)
  };
  using Respond = std::function<Answer(long long rank, const std::vector<std::string>& args)>;

  FakeRankRunner(std::vector<std::string> hosts, Respond respond)
      : hosts_(std::move(hosts)), respond_(std::move(respond)) {}

  std::vector<RankResult> run(const std::vector<std::vector<std::string>>& args_per_rank,
                              std::chrono::milliseconds timeout) override {
    timeouts.push_back(timeout);
    std::vector<RankResult> results;
    for (size_t rank = 0; rank < hosts_.size(); ++rank) {
      RankResult result;
      result.rank = static_cast<long long>(rank);
      result.host = hosts_[rank];
      const auto& args = rank < args_per_rank.size() ? args_per_rank[rank] : kNone;
      if (args.empty()) {
        result.skipped = true;
        results.push_back(std::move(result));
        continue;
      }
      commands.push_back(result.host + ": " + join(args));
      const Answer answer = respond_(result.rank, args);
      result.exit_code = answer.exit_code;
      result.output = answer.output;
      result.error = answer.error;
      results.push_back(std::move(result));
    }
    return results;
  }

  // Records "FROM: ARGS | TO: ARGS"; each side answered by `respond` as if run on its own (the
  // target's answer may depend on the source's: `streamed_from` is set while it is asked).
  Streamed stream(long long from, const std::vector<std::string>& source_args, long long to,
                  const std::vector<std::string>& target_args,
                  std::chrono::milliseconds timeout) override {
    timeouts.push_back(timeout);
    const auto side = [&](long long rank, const std::vector<std::string>& args) {
      RankResult result;
      result.rank = rank;
      result.host = hosts_.at(static_cast<size_t>(rank));
      const Answer answer = respond_(rank, args);
      result.exit_code = answer.exit_code;
      result.output = answer.output;
      result.error = answer.error;
      return result;
    };
    commands.push_back(hosts_.at(static_cast<size_t>(from)) + ": " + join(source_args) + " | " +
                       hosts_.at(static_cast<size_t>(to)) + ": " + join(target_args));
    Streamed streamed;
    streamed.source = side(from, source_args);
    streamed_from = from;
    streamed.target = side(to, target_args);
    streamed_from.reset();
    return streamed;
  }

  std::vector<std::string> commands;  // "HOST: ARGS", in the order they ran
  std::optional<long long> streamed_from;
  std::vector<std::chrono::milliseconds> timeouts;

 private:
  static std::string join(const std::vector<std::string>& args) {
    std::string joined;
    for (const auto& word : args) joined += (joined.empty() ? "" : " ") + word;
    return joined;
  }
  inline static const std::vector<std::string> kNone{};
  std::vector<std::string> hosts_;
  Respond respond_;
};

}  // namespace gl::testing
