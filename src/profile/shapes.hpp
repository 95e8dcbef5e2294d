// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a profile's string values must look like, checked by loops over Scan (util/scan.hpp):
// no regex engine, no recursion, linear in the length. Each comment gives the grammar as a regex
// for the reader; the regex itself is never run.

#include <optional>
#include <string_view>

namespace gl {

// [A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?  ("org/name" or "name")
bool is_hub_id(std::string_view text);

// [A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?  or  \[[0-9A-Fa-f:]+\]
bool is_host(std::string_view text);

// ([A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\]):([0-9]{1,5}): the port, when it is 1-65535.
std::optional<long> host_port(std::string_view text);

// [A-Za-z0-9_-]+  (an engine's name for something: EAGLE3)
bool is_word(std::string_view text);

// [0-9]{1,2}\.[0-9]{1,2}(\.[0-9]{1,3})?  ("13.0", "12.8.1")
bool is_toolkit_version(std::string_view text);

// FlashInfer's FLASHINFER_CUDA_ARCH_LIST (catalog/flashinfer_arch_list): "9.0a 10.0a", "12.0f"
bool is_arch_list(std::string_view text);

// (GPU|MIG)-[0-9A-Fa-f-]{8,64}  or  [0-9]{1,4}
bool is_gpu_device(std::string_view text);

// [0-9]{1,2}\.[0-9]  ("12.0")
bool is_compute_capability(std::string_view text);

// [A-Za-z0-9][A-Za-z0-9._/:@-]*, no "//", not ending in '/', ':' or '@', at most one '@' (an OCI
// image reference, loosely distribution/reference's grammar: "docker.io/vllm/vllm-openai:v0.11.0",
// "localhost/mock@sha256:..."; podman itself judges the rest, and it never starts with '-').
bool is_image_reference(std::string_view text);

// [a-z_][a-z0-9_-]{0,31}  (a user or group name)
bool is_account_name(std::string_view text);

// A user name OpenSSH 9.6's ssh takes from -l: not empty, no leading '-', no trailing '\\', no
// '-' after white space, none of '`";&<>|(){} (ssh.c valid_ruser, openssh-portable V_9_6_P1:
// the fix for CVE-2023-51385; older clients pass such names on to ProxyCommand's shell).
bool is_ssh_user(std::string_view text);

// [1-9][0-9]{0,15}[KMGT]?  or  [1-9][0-9]?%  or  100%  or  infinity  (MemoryMax=)
bool is_memory_size(std::string_view text);

// [A-Z][A-Za-z0-9]*=.*  (a unit file directive; the value is checked elsewhere)
bool is_directive(std::string_view text);

// [A-Za-z_][A-Za-z0-9_]*  (an environment variable name)
bool is_variable_name(std::string_view text);

// The grammar a string key's value must match, named in the key table (schema.hpp) and checked
// there for every key alike. All but `any` also refuse control characters.
enum class Shape {
  any,                 // every byte but NUL: argv words
  text,                // one line without control characters
  absolute_path,       // /...
  model_path,          // an absolute path or is_hub_id
  toolkit_root,        // an absolute path without ':' or ' ' (it goes into PATH)
  host,                // is_host
  listen_address,      // not empty, without ' ' or '/' (an address or host name to bind)
  url_path,            // /[^ ]*
  host_port,           // host_port
  word,                // is_word
  toolkit_version,     // is_toolkit_version
  arch_list,           // is_arch_list
  gpu_device,          // is_gpu_device
  compute_capability,  // is_compute_capability
  image_reference,     // is_image_reference
  account_name,        // is_account_name
  ssh_user,            // is_ssh_user
  memory_size,         // is_memory_size
  directive,           // is_directive
};

bool has_control_or_nul(std::string_view text);
bool has_shape(Shape shape, std::string_view text);
// What a value of `shape` must do, for "'key' must <this>, got '...'".
std::string_view shape_requirement(Shape shape);

}  // namespace gl
