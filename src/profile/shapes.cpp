// SPDX-License-Identifier: Apache-2.0
#include "profile/shapes.hpp"

#include "catalog/flashinfer_arch_list.hpp"
#include "util/scan.hpp"

namespace gl {
namespace {

bool is_hub_char(char c) {
  return is_alnum(c) || c == '.' || c == '_' || c == '-';
}

bool is_host_char(char c) {
  return is_alnum(c) || c == '.' || c == '-';
}

bool is_address_char(char c) {
  return is_hex_digit(c) || c == ':';
}

// \[[0-9A-Fa-f:]+\]
bool bracketed_address(Scan& scan) {
  return scan.literal("[") && scan.run(is_address_char) && scan.literal("]");
}

}  // namespace

bool is_hub_id(std::string_view text) {
  Scan scan(text);
  if (!scan.one(is_alnum)) return false;
  scan.run(is_hub_char, 0);
  if (scan.literal("/")) {
    if (!scan.one(is_alnum)) return false;
    scan.run(is_hub_char, 0);
  }
  return scan.done();
}

bool is_host(std::string_view text) {
  if (text.starts_with('[')) {
    Scan scan(text);
    return bracketed_address(scan) && scan.done();
  }
  Scan scan(text);
  return scan.run(is_host_char) && scan.done() && is_alnum(text.front()) && is_alnum(text.back());
}

std::optional<long> host_port(std::string_view text) {
  Scan scan(text);
  if (text.starts_with('[') ? !bracketed_address(scan) : !scan.run(is_host_char))
    return std::nullopt;
  if (!scan.literal(":")) return std::nullopt;
  const std::string_view port = scan.rest();
  if (!scan.digits(1, 5) || !scan.done()) return std::nullopt;
  long value = 0;
  for (char c : port) value = value * 10 + (c - '0');
  if (value < 1 || value > 65535) return std::nullopt;
  return value;
}

bool is_word(std::string_view text) {
  Scan scan(text);
  return scan.run([](char c) { return is_alnum(c) || c == '_' || c == '-'; }) && scan.done();
}

bool is_image_reference(std::string_view text) {
  if (text.empty() || !is_alnum(text.front())) return false;
  if (text.back() == '/' || text.back() == ':' || text.back() == '@') return false;
  if (text.find("//") != std::string_view::npos) return false;
  if (text.find('@') != text.rfind('@')) return false;
  Scan scan(text);
  return scan.run([](char c) {
    return is_alnum(c) || c == '.' || c == '_' || c == '/' || c == ':' || c == '@' || c == '-';
  }) && scan.done();
}

bool is_toolkit_version(std::string_view text) {
  Scan scan(text);
  if (!scan.digits(1, 2) || !scan.literal(".") || !scan.digits(1, 2)) return false;
  if (scan.literal(".") && !scan.digits(1, 3)) return false;
  return scan.done();
}

bool is_arch_list(std::string_view text) {
  return parse_flashinfer_arch_list(text).has_value();
}

bool is_gpu_device(std::string_view text) {
  Scan scan(text);
  if (scan.literal("GPU-") || scan.literal("MIG-"))
    return scan.run([](char c) { return is_hex_digit(c) || c == '-'; }, 8, 64) && scan.done();
  return scan.digits(1, 4) && scan.done();
}

bool is_compute_capability(std::string_view text) {
  Scan scan(text);
  return scan.digits(1, 2) && scan.literal(".") && scan.digits(1, 1) && scan.done();
}

bool is_account_name(std::string_view text) {
  Scan scan(text);
  auto lower = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  auto rest = [&](char c) { return lower(c) || is_digit(c) || c == '-'; };
  return scan.one(lower) && scan.run(rest, 0, 31) && scan.done();
}

bool is_ssh_user(std::string_view text) {
  if (text.empty() || text.front() == '-' || text.back() == '\\') return false;
  if (text.find_first_of("'`\";&<>|(){}") != std::string_view::npos) return false;
  for (size_t i = 0; i + 1 < text.size(); ++i)
    if (text[i] == ' ' && text[i + 1] == '-') return false;  // the other white space is control
  return true;
}

bool is_memory_size(std::string_view text) {
  if (text == "infinity" || text == "100%") return true;
  Scan scan(text);
  if (!scan.one([](char c) { return c >= '1' && c <= '9'; })) return false;
  if (text.ends_with('%')) return scan.digits(0, 1) && scan.literal("%") && scan.done();
  scan.digits(0, 15);
  scan.one_of("KMGT");
  return scan.done();
}

bool is_directive(std::string_view text) {
  Scan scan(text);
  return scan.one([](char c) { return c >= 'A' && c <= 'Z'; }) && scan.run(is_alnum, 0) &&
         scan.literal("=");
}

bool is_variable_name(std::string_view text) {
  Scan scan(text);
  return scan.one([](char c) { return is_alpha(c) || c == '_'; }) &&
         scan.run([](char c) { return is_alnum(c) || c == '_'; }, 0) && scan.done();
}

bool has_control_or_nul(std::string_view text) {
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

bool has_shape(Shape shape, std::string_view text) {
  if (shape == Shape::any) return text.find('\0') == std::string_view::npos;
  if (has_control_or_nul(text)) return false;
  const bool absolute = !text.empty() && text.front() == '/';
  switch (shape) {
    case Shape::any:
    case Shape::text:
      return true;
    case Shape::absolute_path:
      return absolute;
    case Shape::model_path:
      return absolute || is_hub_id(text);
    case Shape::toolkit_root:
      return absolute && text.find_first_of(": ") == std::string_view::npos;
    case Shape::host:
      return is_host(text);
    case Shape::listen_address:
      return !text.empty() && text.find_first_of(" /") == std::string_view::npos;
    case Shape::url_path:
      return absolute && text.find(' ') == std::string_view::npos;
    case Shape::host_port:
      return host_port(text).has_value();
    case Shape::word:
      return is_word(text);
    case Shape::toolkit_version:
      return is_toolkit_version(text);
    case Shape::arch_list:
      return is_arch_list(text);
    case Shape::gpu_device:
      return is_gpu_device(text);
    case Shape::compute_capability:
      return is_compute_capability(text);
    case Shape::image_reference:
      return is_image_reference(text);
    case Shape::account_name:
      return is_account_name(text);
    case Shape::ssh_user:
      return is_ssh_user(text);
    case Shape::memory_size:
      return is_memory_size(text);
    case Shape::directive:
      return is_directive(text);
  }
  return false;
}

std::string_view shape_requirement(Shape shape) {
  switch (shape) {
    case Shape::any:
      return "not contain a NUL byte";
    case Shape::text:
      return "not contain control characters";
    case Shape::absolute_path:
      return "be an absolute path";
    case Shape::model_path:
      return "be an absolute path or a hub id like 'org/name'";
    case Shape::toolkit_root:
      return "be an absolute path without ':' or spaces (it goes into PATH)";
    case Shape::host:
      return "be a host name or address";
    case Shape::listen_address:
      return "be an address or host name";
    case Shape::url_path:
      return "start with '/'";
    case Shape::host_port:
      return "be host:port";
    case Shape::word:
      return "be a name like EAGLE3 or DFLASH";
    case Shape::toolkit_version:
      return "look like \"13.0\"";
    case Shape::arch_list:
      return "list architectures like \"12.0f\" or \"9.0a 10.0a\"";
    case Shape::gpu_device:
      return "be an index or a GPU-/MIG- UUID";
    case Shape::compute_capability:
      return "be a compute capability like \"12.0\"";
    case Shape::image_reference:
      return "be an image reference like \"docker.io/vllm/vllm-openai:v0.11.0\"";
    case Shape::account_name:
      return "be a user or group name";
    case Shape::ssh_user:
      return "be a user name ssh accepts: not starting with '-', ending in '\\', with '-' after a "
             "space or with any of '`\";&<>|(){}";
    case Shape::memory_size:
      return "be a size like \"900G\", a percentage or \"infinity\"";
    case Shape::directive:
      return "be a single 'Key=Value' line";
  }
  return "";
}

}  // namespace gl
