// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether every rank of a group reaches rank 0's rendezvous port before the engines try (issue
// 18): rank 0 listens on the port the engine will listen on, the other ranks connect to it, each
// for a bounded time. The listener greets each connection, so a rank that reaches something else
// listening on the port is told apart from one that reached the probe. Plain sockets, only in
// rendezvous_probe.cpp.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/engine_argv.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// Rank 0's rendezvous as every engine of the group meets it (SGLang --dist-init-addr, vLLM
// --master-addr/--master-port or its data-parallel address and RPC port: all spelled from
// parallelism.dist_init_addr); nullopt for a profile without one.
std::optional<Rendezvous> group_rendezvous(const Profile& profile);

enum class ReachFailure { none, refused, timeout, no_route, not_the_probe, other };
// "refused", "timeout", "no route", "something else answers", "error".
std::string_view reach_failure_name(ReachFailure failure);

struct ReachResult {
  ReachFailure failure = ReachFailure::none;
  std::string detail;  // the system's words for the last failure ("Connection refused")

  bool reached() const { return failure == ReachFailure::none; }
};

// Which failure an errno of connect() is.
ReachFailure classify_connect_errno(int error);

// Connects to host:port (a name or a literal, IPv6 bare) again and again until the probe
// listening there greets it or `within` has passed, then says which rank it is. The result is the
// last failure when it never got through.
ReachResult reach_rendezvous(const std::string& host, long long port, long long rank,
                             std::chrono::milliseconds within);

struct ListenResult {
  bool port_in_use = false;       // something else listens on the port: nothing was probed
  std::vector<long long> joined;  // the ranks that connected, in the order they did
};

// Listens on `port` on every address of `host`'s family (as the engine's store does) until every
// rank of `expected` has connected or `within` has passed. Connections are greeted and read all
// at once, each for a bounded time (at most 128 held; the oldest silent one gives way), so idle
// connections to the port delay no rank. An error for a bind or listen that
// fails for another reason than the port being in use.
Result<ListenResult> listen_for_ranks(const std::string& host, long long port,
                                      const std::vector<long long>& expected,
                                      std::chrono::milliseconds within);

// The one line a rank's probe prints, and `up --all-nodes` shows for the rank:
// "reaches 10.0.0.1:5000", "cannot reach 10.0.0.1:5000: refused (Connection refused)".
std::string reach_line(const std::string& address, const ReachResult& result);
// Rank 0's: "listened on port 5000: rank(s) 1, 2 connected", "... rank(s) 2 never connected",
// "port 5000 is in use on this node: something else listens there".
std::string listen_line(long long port, const ListenResult& result,
                        const std::vector<long long>& expected);

}  // namespace gl
