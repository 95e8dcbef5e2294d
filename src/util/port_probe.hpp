// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether a TCP port can still be bound: the answer to "is the port already taken".

#include <string>

#include "util/error.hpp"

namespace gl {

enum class PortState { free, taken };

// Tries to bind host:port (SO_REUSEADDR, so sockets in TIME_WAIT do not count) and releases it
// at once. Fails when the host does not resolve or the bind fails for another reason.
Result<PortState> probe_port(const std::string& host, long long port);

}  // namespace gl
