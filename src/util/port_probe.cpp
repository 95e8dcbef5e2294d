// SPDX-License-Identifier: Apache-2.0
#include "util/port_probe.hpp"

#include <cerrno>
#include <cstring>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/unique_fd.hpp"

namespace gl {

Result<PortState> probe_port(const std::string& host, long long port) {
  std::string bare = host;
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']')
    bare = bare.substr(1, bare.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  std::string service = std::to_string(port);
  if (int code =
          getaddrinfo(bare.empty() ? nullptr : bare.c_str(), service.c_str(), &hints, &addresses);
      code != 0)
    return failf("Failed to resolve '{}': {}", host, gai_strerror(code));
  Result<PortState> result = failf("Failed to bind '{}:{}': no address", host, port);
  for (addrinfo* address = addresses; address; address = address->ai_next) {
    UniqueFd fd(socket(address->ai_family, address->ai_socktype, address->ai_protocol));
    if (!fd) continue;
    int on = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    int bound = bind(fd.get(), address->ai_addr, address->ai_addrlen);
    int bind_errno = errno;
    fd = UniqueFd();
    if (bound == 0) {
      result = PortState::free;
      continue;  // every address must be free
    }
    if (bind_errno == EADDRINUSE) {
      result = PortState::taken;
      break;
    }
    if (bind_errno == EACCES) {  // a privileged port without the right to bind it: not "taken"
      result = PortState::free;
      continue;
    }
    result = failf("Failed to bind '{}:{}': {}", host, port, std::strerror(bind_errno));
  }
  freeaddrinfo(addresses);
  return result;
}

}  // namespace gl
