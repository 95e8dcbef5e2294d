// SPDX-License-Identifier: Apache-2.0
#pragma once
// The access line the engines' HTTP server writes for each request it answered. SGLang and vLLM
// serve through uvicorn, whose access logger writes, at INFO on stdout,
//   INFO:     127.0.0.1:54321 - "GET /health HTTP/1.1" 503 Service Unavailable
// uvicorn/config.py LOGGING_CONFIG's access format
// '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s', with
// uvicorn/logging.py AccessFormatter.formatMessage's request_line "METHOD PATH HTTP/VERSION" and
// get_status_code's "CODE PHRASE" (encode/uvicorn 0.30, the release vLLM 0.11 and SGLang 0.5
// pin at least). mock/sglang's Handler.log_message writes the same line.

#include <string_view>

namespace gl {

// Between the client's address and the request line.
inline constexpr std::string_view kAccessRequestOpen = " - \"";
// The request line's method for a health probe, and its protocol's start.
inline constexpr std::string_view kAccessProbeMethod = "GET ";
inline constexpr std::string_view kAccessProtocol = " HTTP/";
// After the request line: its closing quote and a space, then the three-digit status.
inline constexpr std::string_view kAccessStatusOpen = "\" ";

}  // namespace gl
