// SPDX-License-Identifier: Apache-2.0
#include "unit/transient.hpp"

#include <array>
#include <charconv>
#include <limits>

#include <fmt/core.h>
#include <fmt/format.h>

#include "unit/escape.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

enum class Kind {
  lifecycle,     // the service's own start, stop and restart: not the command's
  string,        // s
  boolean,       // b
  strv,          // as
  capabilities,  // t: only the empty set (no capability) is mapped
  device_allow,  // a(ss): path, access
  namespaces,    // t: only "yes" (no namespace may be created) is mapped
  filter,        // (bas)
  error_number,  // i
  mode,          // u, octal
  rlimit,        // t hard and t NAMESoft
  bytes,         // t
  credential,    // a(ss): name, file
  binds,         // a(ssbt): [-]SOURCE[:DESTINATION[:rbind|norbind]] words
};

struct Directive {
  std::string_view name;
  Kind kind;
};

// Every [Service] directive the renderer writes, and the ones service.extra commonly adds.
constexpr std::array kDirectives{
    Directive{"Type", Kind::lifecycle},
    Directive{"NotifyAccess", Kind::lifecycle},
    Directive{"ExecStartPre", Kind::lifecycle},
    Directive{"ExecStart", Kind::lifecycle},
    Directive{"ExecStartPost", Kind::lifecycle},
    Directive{"ExecStop", Kind::lifecycle},
    Directive{"ExecStopPost", Kind::lifecycle},
    Directive{"ExecReload", Kind::lifecycle},
    Directive{"TimeoutStartSec", Kind::lifecycle},
    Directive{"TimeoutStopSec", Kind::lifecycle},
    Directive{"TimeoutSec", Kind::lifecycle},
    Directive{"WatchdogSec", Kind::lifecycle},
    Directive{"KillMode", Kind::lifecycle},
    Directive{"KillSignal", Kind::lifecycle},
    Directive{"SendSIGKILL", Kind::lifecycle},
    Directive{"Restart", Kind::lifecycle},
    Directive{"RestartSec", Kind::lifecycle},
    Directive{"RestartPreventExitStatus", Kind::lifecycle},
    Directive{"SuccessExitStatus", Kind::lifecycle},
    Directive{"User", Kind::string},
    Directive{"Group", Kind::string},
    Directive{"WorkingDirectory", Kind::string},
    Directive{"ProtectSystem", Kind::string},
    Directive{"ProtectHome", Kind::string},
    Directive{"ProtectProc", Kind::string},
    Directive{"ProcSubset", Kind::string},
    Directive{"DevicePolicy", Kind::string},
    Directive{"KeyringMode", Kind::string},
    Directive{"PrivateTmp", Kind::boolean},
    Directive{"PrivateDevices", Kind::boolean},
    Directive{"PrivateNetwork", Kind::boolean},
    Directive{"PrivateUsers", Kind::boolean},
    Directive{"PrivateMounts", Kind::boolean},
    Directive{"PrivateIPC", Kind::boolean},
    Directive{"NoNewPrivileges", Kind::boolean},
    Directive{"MemoryDenyWriteExecute", Kind::boolean},
    Directive{"RestrictRealtime", Kind::boolean},
    Directive{"RemoveIPC", Kind::boolean},
    Directive{"ProtectKernelTunables", Kind::boolean},
    Directive{"ProtectKernelModules", Kind::boolean},
    Directive{"ProtectKernelLogs", Kind::boolean},
    Directive{"ProtectClock", Kind::boolean},
    Directive{"ProtectControlGroups", Kind::boolean},
    Directive{"ProtectHostname", Kind::boolean},
    Directive{"LockPersonality", Kind::boolean},
    Directive{"RestrictSUIDSGID", Kind::boolean},
    Directive{"Environment", Kind::strv},
    Directive{"UnsetEnvironment", Kind::strv},
    Directive{"ReadWritePaths", Kind::strv},
    Directive{"ReadOnlyPaths", Kind::strv},
    Directive{"InaccessiblePaths", Kind::strv},
    Directive{"ExecPaths", Kind::strv},
    Directive{"NoExecPaths", Kind::strv},
    Directive{"SupplementaryGroups", Kind::strv},
    Directive{"SystemCallArchitectures", Kind::strv},
    Directive{"StateDirectory", Kind::strv},
    Directive{"CacheDirectory", Kind::strv},
    Directive{"RuntimeDirectory", Kind::strv},
    Directive{"LogsDirectory", Kind::strv},
    Directive{"ConfigurationDirectory", Kind::strv},
    Directive{"CapabilityBoundingSet", Kind::capabilities},
    Directive{"AmbientCapabilities", Kind::capabilities},
    Directive{"DeviceAllow", Kind::device_allow},
    Directive{"RestrictNamespaces", Kind::namespaces},
    Directive{"RestrictAddressFamilies", Kind::filter},
    Directive{"SystemCallFilter", Kind::filter},
    Directive{"SystemCallErrorNumber", Kind::error_number},
    Directive{"UMask", Kind::mode},
    Directive{"LimitCORE", Kind::rlimit},
    Directive{"LimitMEMLOCK", Kind::rlimit},
    Directive{"LimitNOFILE", Kind::rlimit},
    Directive{"LimitNPROC", Kind::rlimit},
    Directive{"LimitSTACK", Kind::rlimit},
    Directive{"MemoryMax", Kind::bytes},
    Directive{"MemoryHigh", Kind::bytes},
    Directive{"MemorySwapMax", Kind::bytes},
    Directive{"LoadCredential", Kind::credential},
    Directive{"BindPaths", Kind::binds},
    Directive{"BindReadOnlyPaths", Kind::binds},
};

// mount(2)'s MS_REC: systemd binds recursively unless a word says norbind.
constexpr uint64_t kMountRecursive = 16384;

// The errno names SystemCallErrorNumber= takes that a unit of ours may carry (errno(3), Linux).
constexpr std::array<std::pair<std::string_view, int32_t>, 5> kErrnoNumbers{
    {{"EPERM", 1}, {"EACCES", 13}, {"EINVAL", 22}, {"ENOSYS", 38}, {"EOPNOTSUPP", 95}}};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

Result<void> expand_specifier(std::string_view value, size_t& i, std::string_view credentials,
                              std::string& out) {
  if (i + 1 >= value.size()) return failf("'{}': a lone '%' at its end", value);
  const char specifier = value[++i];
  if (specifier == '%')
    out += '%';
  else if (specifier == 'd')
    out += credentials;
  else
    return failf("'{}': specifier %{} has no value for a transient unit", value, specifier);
  return {};
}

Result<void> unescape(std::string_view value, size_t& i, std::string& out) {
  if (i + 1 >= value.size()) return failf("'{}': a lone backslash at its end", value);
  const char c = value[++i];
  switch (c) {
    case 'n':
      out += '\n';
      return {};
    case 't':
      out += '\t';
      return {};
    case 'r':
      out += '\r';
      return {};
    case 's':
      out += ' ';
      return {};
    case 'x': {
      if (i + 2 >= value.size() || hex_digit(value[i + 1]) < 0 || hex_digit(value[i + 2]) < 0)
        return failf("'{}': a \\x escape needs two hex digits", value);
      out += static_cast<char>(hex_digit(value[i + 1]) * 16 + hex_digit(value[i + 2]));
      i += 2;
      return {};
    }
    case '\\':
    case '"':
    case '\'':
      out += c;
      return {};
    default:
      return failf("'{}': unknown escape \\{}", value, c);
  }
}

// The whole value as one string, specifiers expanded (WorkingDirectory=, User=, ...).
Result<std::string> single_value(std::string_view value, std::string_view credentials) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '%')
      GL_TRY_VOID(expand_specifier(value, i, credentials, out));
    else
      out += value[i];
  }
  // escape_specifiers' guard against line continuation: a trailing "\ " is "\".
  if (out.ends_with("\\ ")) out.pop_back();
  return out;
}

Result<bool> parse_boolean(std::string_view value) {
  for (auto yes : {"yes", "true", "on", "1"})
    if (value == yes) return true;
  for (auto no : {"no", "false", "off", "0"})
    if (value == no) return false;
  return failf("'{}' is not a boolean", value);
}

Result<uint64_t> parse_number(std::string_view text, unsigned base = 10) {
  uint64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number, base);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty())
    return failf("'{}' is not a number", text);
  return number;
}

// "infinity", or bytes with an optional K, M, G or T (powers of 1024), as systemd reads sizes.
Result<uint64_t> parse_size(std::string_view text) {
  if (text == "infinity") return std::numeric_limits<uint64_t>::max();
  uint64_t factor = 1;
  if (!text.empty()) {
    const std::string_view suffixes = "KMGT";
    if (auto at = suffixes.find(text.back()); at != std::string_view::npos) {
      factor = uint64_t{1} << (10 * (at + 1));
      text.remove_suffix(1);
    }
  }
  auto number = parse_number(text);
  if (!number) return failf("'{}' is not a size in bytes or infinity", text);
  if (*number > std::numeric_limits<uint64_t>::max() / factor)
    return failf("'{}' is out of range", text);
  return *number * factor;
}

Result<std::vector<BusProperty>> map_directive(const Directive& directive, std::string_view value,
                                               std::string_view credentials) {
  const std::string name(directive.name);
  auto one = [&](BusValue mapped) {
    return std::vector<BusProperty>{BusProperty{name, std::move(mapped)}};
  };
  switch (directive.kind) {
    case Kind::lifecycle:
      return std::vector<BusProperty>{};
    case Kind::string: {
      GL_TRY(auto text, single_value(value, credentials));
      return one(text);
    }
    case Kind::boolean: {
      GL_TRY(auto flag, parse_boolean(value));
      return one(flag);
    }
    case Kind::strv: {
      GL_TRY(auto words, unit_words(value, credentials));
      return one(words);
    }
    case Kind::capabilities:
      if (!value.empty()) return failf("capability names ('{}') are not mapped", value);
      return one(uint64_t{0});
    case Kind::device_allow: {
      GL_TRY(auto words, unit_words(value, credentials));
      if (words.empty()) return one(BusPairs{});
      if (words.size() > 2) return failf("'{}' is not 'DEVICE [rwm]'", value);
      return one(BusPairs{{words[0], words.size() == 2 ? words[1] : std::string()}});
    }
    case Kind::namespaces: {
      auto flag = parse_boolean(value);
      if (!flag || !*flag) return failf("only 'yes' is mapped, not '{}'", value);
      return one(uint64_t{0});  // the set of namespaces it may create: none
    }
    case Kind::filter: {
      BusFilter filter;
      std::string_view rest = value;
      if (rest.starts_with('~')) {
        filter.allow = false;
        rest.remove_prefix(1);
      }
      GL_TRY(auto words, unit_words(rest, credentials));
      filter.entries = std::move(words);
      return one(filter);
    }
    case Kind::error_number:
      for (const auto& [errno_name, number] : kErrnoNumbers)
        if (value == errno_name) return one(number);
      return failf("'{}' is not an errno name gpulaunch maps", value);
    case Kind::mode: {
      auto mode = parse_number(value, 8);
      if (!mode || *mode > 07777) return failf("'{}' is not an octal mode", value);
      return one(static_cast<uint32_t>(*mode));
    }
    case Kind::rlimit: {
      const size_t colon = value.find(':');
      GL_TRY(auto soft, parse_size(value.substr(0, colon)));
      GL_TRY(auto hard,
             parse_size(colon == std::string_view::npos ? value : value.substr(colon + 1)));
      return std::vector<BusProperty>{BusProperty{name, hard}, BusProperty{name + "Soft", soft}};
    }
    case Kind::bytes: {
      GL_TRY(auto size, parse_size(value));
      return one(size);
    }
    case Kind::binds: {
      GL_TRY(auto words, unit_words(value, credentials));
      BusBinds binds;
      for (std::string word : words) {
        BusBind bind;
        if (word.starts_with('-')) {
          bind.ignore_missing = true;
          word.erase(0, 1);
        }
        const size_t colon = word.find(':');
        bind.source = word.substr(0, colon);
        bind.destination = bind.source;
        bind.flags = kMountRecursive;
        if (colon != std::string::npos) {
          const std::string rest = word.substr(colon + 1);
          const size_t second = rest.find(':');
          bind.destination = rest.substr(0, second);
          const std::string options = second == std::string::npos ? "" : rest.substr(second + 1);
          if (options == "norbind")
            bind.flags = 0;
          else if (!options.empty() && options != "rbind")
            return failf("'{}' is not rbind or norbind", options);
        }
        if (!bind.source.starts_with('/') || !bind.destination.starts_with('/'))
          return failf("'{}' is not an absolute path", word);
        binds.push_back(std::move(bind));
      }
      return one(binds);
    }
    case Kind::credential: {
      GL_TRY(auto text, single_value(value, credentials));
      const size_t colon = text.find(':');
      if (colon == std::string::npos || colon == 0) return failf("'{}' is not 'NAME:FILE'", value);
      return one(BusPairs{{text.substr(0, colon), text.substr(colon + 1)}});
    }
  }
  return failf("unknown directive kind");
}

bool has_control(std::string_view text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return true;
  }
  return false;
}

// Whether any string a property carries holds a control byte.
bool carries_control(const BusValue& value) {
  struct Visit {
    bool operator()(const std::string& text) const { return has_control(text); }
    bool operator()(const std::vector<std::string>& words) const {
      for (const auto& word : words)
        if (has_control(word)) return true;
      return false;
    }
    bool operator()(const BusPairs& pairs) const {
      for (const auto& [first, second] : pairs)
        if (has_control(first) || has_control(second)) return true;
      return false;
    }
    bool operator()(const BusFilter& filter) const { return (*this)(filter.entries); }
    bool operator()(const BusBinds& binds) const {
      for (const auto& bind : binds)
        if (has_control(bind.source) || has_control(bind.destination)) return true;
      return false;
    }
    bool operator()(bool) const { return false; }
    bool operator()(uint64_t) const { return false; }
    bool operator()(int32_t) const { return false; }
    bool operator()(uint32_t) const { return false; }
  };
  return std::visit(Visit{}, value);
}

}  // namespace

std::string transient_description(std::string_view profile,
                                  const std::vector<std::string>& command) {
  return one_line(fmt::format("gpulaunch exec {}: {}", profile, fmt::join(command, " ")));
}

Result<std::vector<std::string>> unit_words(std::string_view value,
                                            std::string_view credentials_directory) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < value.size()) {
    while (i < value.size() && is_space(value[i])) ++i;
    if (i >= value.size()) break;
    std::string word;
    char quote = 0;
    for (; i < value.size(); ++i) {
      const char c = value[i];
      if (!quote && is_space(c)) break;
      if (!quote && (c == '"' || c == '\'')) {
        quote = c;
      } else if (quote && c == quote) {
        quote = 0;
      } else if (c == '\\') {
        GL_TRY_VOID(unescape(value, i, word));
      } else if (c == '%') {
        GL_TRY_VOID(expand_specifier(value, i, credentials_directory, word));
      } else {
        word += c;
      }
    }
    if (quote) return failf("'{}': an unterminated quote", value);
    words.push_back(std::move(word));
  }
  return words;
}

Result<std::vector<BusProperty>> transient_properties(const UnitFile& unit,
                                                      std::string_view transient_unit) {
  const std::string credentials = fmt::format("/run/credentials/{}", transient_unit);
  std::vector<BusProperty> properties;
  for (const auto& section : unit.sections()) {
    if (section.name != "Service") continue;
    for (const auto& entry : section.entries) {
      const Directive* directive = nullptr;
      for (const auto& known : kDirectives)
        if (known.name == entry.key) directive = &known;
      if (!directive)
        return failf("Cannot run in the service's sandbox: {}= has no transient-unit mapping",
                     entry.key);
      auto mapped = map_directive(*directive, entry.value, credentials);
      if (!mapped)
        return failf("Cannot run in the service's sandbox: {}={}: {}", entry.key, entry.value,
                     mapped.error().message);
      for (auto& property : *mapped) {
        // systemd writes some properties into the transient unit's file as they came (v252):
        // a newline there would be a line of the unit's own.
        if (carries_control(property.value))
          return failf(
              "Cannot run in the service's sandbox: {}= holds a control character, which would "
              "become unit-file text",
              entry.key);
        properties.push_back(std::move(property));
      }
    }
  }
  return properties;
}

}  // namespace gl
