// SPDX-License-Identifier: Apache-2.0
#include "group/rendezvous_probe.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include <fmt/core.h>
#include <fmt/format.h>

#include "util/unique_fd.hpp"

namespace gl {
namespace {

using Clock = std::chrono::steady_clock;

// What the listener sends first and what a connecting rank answers: one line each.
constexpr std::string_view kGreeting = "gpulaunch rendezvous probe\n";
constexpr std::string_view kRankPrefix = "rank ";
constexpr auto kRetryPause = std::chrono::milliseconds(200);
constexpr auto kAttemptLimit = std::chrono::seconds(3);
// The longest line either side sends, and how many connections the listener reads at once.
constexpr size_t kLineLimit = 64;
constexpr size_t kMaxPeers = 128;

int remaining_ms(Clock::time_point deadline, std::chrono::milliseconds cap) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp(left, std::chrono::milliseconds(0), cap).count());
}

// Reads up to a newline within the deadline; "" when nothing whole came.
std::string read_line(int fd, Clock::time_point deadline) {
  std::string line;
  while (line.size() < kLineLimit) {
    pollfd waiting{fd, POLLIN, 0};
    int ready = ::poll(&waiting, 1, remaining_ms(deadline, kAttemptLimit));
    if (ready <= 0) return {};
    char c = 0;
    if (::recv(fd, &c, 1, 0) != 1) return {};
    line.push_back(c);
    if (c == '\n') return line;
  }
  return {};
}

bool send_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t sent = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    text.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

struct Addresses {
  addrinfo* list = nullptr;
  ~Addresses() {
    if (list) ::freeaddrinfo(list);
  }
};

// One nonblocking connect, waited for within the deadline.
ReachResult connect_once(const addrinfo& address, Clock::time_point deadline, long long rank) {
  UniqueFd fd(::socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                       address.ai_protocol));
  if (!fd) return {ReachFailure::other, std::strerror(errno)};
  if (::connect(fd.get(), address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return {classify_connect_errno(errno), std::strerror(errno)};
    pollfd waiting{fd.get(), POLLOUT, 0};
    int ready = ::poll(&waiting, 1, remaining_ms(deadline, kAttemptLimit));
    if (ready == 0) return {ReachFailure::timeout, "no answer to the connection attempt"};
    if (ready < 0) return {ReachFailure::other, std::strerror(errno)};
    int error = 0;
    socklen_t size = sizeof error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size);
    if (error != 0) return {classify_connect_errno(error), std::strerror(error)};
  }
  if (read_line(fd.get(), deadline) != kGreeting)
    return {ReachFailure::not_the_probe, "connected, but no gpulaunch probe greeted it"};
  if (!send_all(fd.get(), fmt::format("{}{}\n", kRankPrefix, rank)))
    return {ReachFailure::other, "the probe closed the connection"};
  return {};
}

// The TCP addresses of host:port (host nullptr with AI_PASSIVE: the wildcard address of
// `family`), into `addresses`; getaddrinfo's code (0: resolved).
int resolve_stream(const char* host, long long port, Addresses& addresses, int family = AF_UNSPEC,
                   int flags = 0) {
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | flags;
  return ::getaddrinfo(host, std::to_string(port).c_str(), &hints, &addresses.list);
}

}  // namespace

std::optional<Rendezvous> group_rendezvous(const Profile& profile) {
  if (!profile.parallelism.dist_init_addr) return std::nullopt;
  const auto [host, port] = split_host_port(*profile.parallelism.dist_init_addr);
  Rendezvous rendezvous{host, 0, false};
  const auto [end, error] =
      std::from_chars(port.data(), port.data() + port.size(), rendezvous.port);
  // Validation has refused such an address already.
  if (error != std::errc{} || end != port.data() + port.size()) return std::nullopt;
  return rendezvous;
}

std::string_view reach_failure_name(ReachFailure failure) {
  switch (failure) {
    case ReachFailure::none:
      return "reached";
    case ReachFailure::refused:
      return "refused";
    case ReachFailure::timeout:
      return "timeout";
    case ReachFailure::no_route:
      return "no route";
    case ReachFailure::not_the_probe:
      return "something else answers";
    case ReachFailure::other:
      return "error";
  }
  return "error";
}

ReachFailure classify_connect_errno(int error) {
  switch (error) {
    case ECONNREFUSED:
    case ECONNRESET:
      return ReachFailure::refused;
    case ETIMEDOUT:
      return ReachFailure::timeout;
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
      return ReachFailure::no_route;
    default:
      return ReachFailure::other;
  }
}

ReachResult reach_rendezvous(const std::string& host, long long port, long long rank,
                             std::chrono::milliseconds within) {
  const auto deadline = Clock::now() + within;
  ReachResult last{ReachFailure::timeout, "no attempt finished in time"};
  do {
    Addresses addresses;
    if (int code = resolve_stream(host.c_str(), port, addresses); code != 0) {
      last = {ReachFailure::no_route,
              fmt::format("'{}' does not resolve: {}", host, ::gai_strerror(code))};
    } else {
      for (addrinfo* address = addresses.list; address; address = address->ai_next) {
        last = connect_once(*address, deadline, rank);
        // Something else holding the port keeps the probe from ever listening there.
        if (last.reached() || last.failure == ReachFailure::not_the_probe) return last;
      }
    }
    // Rank 0's listener may not be up yet: a refusal now is worth another try.
    if (Clock::now() + kRetryPause < deadline) std::this_thread::sleep_for(kRetryPause);
  } while (Clock::now() < deadline);
  return last;
}

Result<ListenResult> listen_for_ranks(const std::string& host, long long port,
                                      const std::vector<long long>& expected,
                                      std::chrono::milliseconds within) {
  const auto deadline = Clock::now() + within;
  Addresses resolved;
  if (int code = resolve_stream(host.c_str(), port, resolved); code != 0)
    return failf("Failed to resolve '{}': {}", host, ::gai_strerror(code));
  const int family = resolved.list->ai_family;
  // The wildcard address of the host's family, as torch.distributed's store binds.
  Addresses wildcard;
  if (int code = resolve_stream(nullptr, port, wildcard, family, AI_PASSIVE); code != 0)
    return failf("Failed to listen on port {}: {}", port, ::gai_strerror(code));
  UniqueFd listener(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener) return failf("Failed to listen on port {}: {}", port, std::strerror(errno));
  int on = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  ListenResult result;
  if (::bind(listener.get(), wildcard.list->ai_addr, wildcard.list->ai_addrlen) != 0) {
    if (errno == EADDRINUSE) {
      result.port_in_use = true;
      return result;
    }
    return failf("Failed to listen on port {}: {}", port, std::strerror(errno));
  }
  if (::listen(listener.get(), 64) != 0)
    return failf("Failed to listen on port {}: {}", port, std::strerror(errno));
  auto missing = [&] {
    return std::any_of(expected.begin(), expected.end(), [&](long long rank) {
      return std::find(result.joined.begin(), result.joined.end(), rank) == result.joined.end();
    });
  };
  // Every connection is greeted at once and read without waiting on the others: a peer that
  // connects and says nothing (a port scanner, a health check) holds one slot until its attempt
  // limit, never the listener, and the oldest silent one gives way when all slots are taken.
  struct Peer {
    UniqueFd fd;
    std::string line;
    Clock::time_point until;
  };
  std::vector<Peer> peers;
  const auto heard = [&](const std::string& line) {
    if (!line.starts_with(kRankPrefix) || !line.ends_with('\n')) return;
    long long rank = -1;
    const char* first = line.data() + kRankPrefix.size();
    const char* last = line.data() + line.size() - 1;
    const auto [end, error] = std::from_chars(first, last, rank);
    if (error != std::errc{} || end != last) return;
    if (std::find(result.joined.begin(), result.joined.end(), rank) == result.joined.end())
      result.joined.push_back(rank);
  };
  while (missing() && Clock::now() < deadline) {
    std::vector<pollfd> waiting{{listener.get(), POLLIN, 0}};
    auto wake = std::min(deadline, Clock::now() + std::chrono::milliseconds(1000));
    for (const auto& peer : peers) {
      waiting.push_back({peer.fd.get(), POLLIN, 0});
      wake = std::min(wake, peer.until);
    }
    if (::poll(waiting.data(), waiting.size(),
               remaining_ms(wake, std::chrono::milliseconds(1000))) < 0 &&
        errno != EINTR)
      return failf("Failed to listen on port {}: {}", port, std::strerror(errno));
    // Peers first (their indices match `waiting`), then new connections.
    std::vector<bool> done(peers.size(), false);
    for (size_t i = 0; i < peers.size(); ++i) {
      if (!(waiting[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[kLineLimit];
      const ssize_t got =
          ::recv(peers[i].fd.get(), buffer, kLineLimit - peers[i].line.size(), MSG_DONTWAIT);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got <= 0) {
        done[i] = true;
        continue;
      }
      peers[i].line.append(buffer, static_cast<size_t>(got));
      if (const auto newline = peers[i].line.find('\n'); newline != std::string::npos) {
        heard(peers[i].line.substr(0, newline + 1));
        done[i] = true;
      } else if (peers[i].line.size() >= kLineLimit) {
        done[i] = true;
      }
    }
    const auto now = Clock::now();
    for (size_t i = peers.size(); i-- > 0;)
      if (done[i] || peers[i].until <= now) peers.erase(peers.begin() + static_cast<long>(i));
    if (!(waiting[0].revents & POLLIN)) continue;
    for (size_t accepted = 0; accepted < kMaxPeers; ++accepted) {
      UniqueFd peer(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!peer) break;
      if (!send_all(peer.get(), kGreeting)) continue;
      if (peers.size() >= kMaxPeers) peers.erase(peers.begin());
      peers.push_back({std::move(peer), {}, now + kAttemptLimit});
    }
  }
  return result;
}

std::string reach_line(const std::string& address, const ReachResult& result) {
  if (result.reached()) return fmt::format("reaches {}", address);
  return fmt::format("cannot reach {}: {} ({})", address, reach_failure_name(result.failure),
                     result.detail);
}

std::string listen_line(long long port, const ListenResult& result,
                        const std::vector<long long>& expected) {
  if (result.port_in_use)
    return fmt::format("port {} is in use on this node: something else listens there", port);
  std::vector<long long> absent;
  for (long long rank : expected)
    if (std::find(result.joined.begin(), result.joined.end(), rank) == result.joined.end())
      absent.push_back(rank);
  std::vector<long long> joined = result.joined;
  std::sort(joined.begin(), joined.end());
  if (absent.empty())
    return fmt::format("listened on port {}: rank(s) {} connected", port, fmt::join(joined, ", "));
  return fmt::format("listened on port {}: rank(s) {} never connected", port,
                     fmt::join(absent, ", "));
}

}  // namespace gl
