// SPDX-License-Identifier: Apache-2.0
#include "facts/toolkit_probe.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "catalog/cuda_arch.hpp"
#include "facts/python_env.hpp"
#include "util/process.hpp"
#include "util/scan.hpp"
#include "util/version.hpp"

namespace gl {
namespace {

// A real version.json is ~3 KB; METADATA is headers plus a description. A real cuda.h is ~1.1
// MB, its `#define CUDA_VERSION` near the top (CUDA 13.0's include/cuda.h, nvcc 13.0.88: line
// 263, byte 14,324): only its head is read.
constexpr size_t kVersionJsonLimit = 256 * 1024;
constexpr size_t kCudaHeaderHead = 256 * 1024;

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

// The digits starting at `at`; empty when there are none.
std::string_view digits_at(std::string_view text, size_t at) {
  size_t end = at;
  while (end < text.size() && is_digit(text[end])) ++end;
  return text.substr(at, end - at);
}

std::optional<std::string> json_member_version(std::string_view text, const char* member) {
  // version.json is two levels deep; anything much deeper is not built.
  auto json = nlohmann::json::parse(
      text, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) { return depth <= 8; },
      /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  auto entry = json.find(member);
  if (entry == json.end() || !entry->is_object()) return std::nullopt;
  auto version = entry->find("version");
  if (version == entry->end() || !version->is_string()) return std::nullopt;
  return version->get<std::string>();
}

std::optional<std::string> major_minor(const std::string& text) {
  auto version = parse_version(text);
  return version ? std::optional(version->major_minor()) : std::nullopt;
}

// Does the dist-info directory `entry` belong to the nvidia-cuda-nvcc wheel for `flavour`
// ("cu13" for SITE/nvidia/cu13, "cuda_nvcc" for SITE/nvidia/cuda_nvcc, "" for a toolkit root)?
// CUDA 12's wheel is nvidia-cuda-nvcc-cu12 (files in nvidia/cuda_nvcc); CUDA 13's is
// nvidia-cuda-nvcc 13.x (files in nvidia/cu13).
bool is_nvcc_dist_info(std::string_view entry, std::string_view flavour) {
  constexpr std::string_view suffix = ".dist-info";
  if (!entry.ends_with(suffix)) return false;
  auto dash = entry.find('-');
  if (dash == std::string_view::npos) return false;
  std::string dist = normalise_dist_name(entry.substr(0, dash));
  std::string version(entry.substr(dash + 1, entry.size() - suffix.size() - dash - 1));
  constexpr std::string_view base = "nvidia_cuda_nvcc";
  if (!dist.starts_with(base)) return false;
  std::string_view rest = std::string_view(dist).substr(base.size());  // "" or "_cu12"
  if (!rest.empty() &&
      !(rest.starts_with("_cu") && rest.size() > 3 && digits_at(rest, 3).size() == rest.size() - 3))
    return false;
  if (flavour.empty()) return true;
  if (flavour == "cuda_nvcc") return !rest.empty();
  // nvidia/cuNN: the unsuffixed wheel of major NN, or a suffixed one for NN.
  auto wanted = flavour.substr(2);
  if (!rest.empty()) return rest.substr(3) == wanted;
  auto parsed = parse_version(version);
  return parsed && std::to_string(parsed->major) == wanted;
}

// The nvcc wheel's METADATA Version for the toolkit at `root` (links resolved), if any:
// pip into site-packages keeps dist-info beside nvidia/; wheels unpacked into a toolkit root
// (as /usr/local/cuda-13.0 on the machine this was written on) keep them in ROOT/dist-info.
std::optional<std::string> nvcc_wheel_version(const NodeFs& node, const std::string& root) {
  std::vector<std::pair<std::string, std::string>> places{{root + "/dist-info", ""}};
  const std::string nvidia = parent_path(root);
  const std::string flavour = normal_path(root).substr(nvidia.size() + (nvidia == "/" ? 0 : 1));
  if (nvidia.ends_with("/nvidia") && (flavour == "cuda_nvcc" || flavour.starts_with("cu")))
    places.emplace_back(parent_path(nvidia), flavour);
  for (const auto& [directory, wanted] : places)
    for (const auto& entry : node.list(directory)) {
      if (!is_nvcc_dist_info(entry, wanted)) continue;
      auto metadata = node.read(directory + "/" + entry + "/METADATA", kMetadataLimit);
      if (auto version = metadata ? parse_metadata_version(*metadata) : std::nullopt)
        return version;
    }
  return std::nullopt;
}

// Runs nvcc as the unprivileged user, or takes its earlier answer for the same file.
void ask_nvcc(const NodeFs& node, ToolkitFact& toolkit, NvccRunner& runner) {
  const auto resolved = node.resolve(toolkit.nvcc);
  const auto host = node.host_path(toolkit.nvcc);
  if (!resolved || !host) return;
  auto identity = identify_program(*host, *resolved);
  const NvccAnswer* known = identity ? runner.cache.find(*identity) : nullptr;
  NvccAnswer answer;
  if (known) {
    answer = *known;
  } else {
    bool transient = false;
    auto version = run_unprivileged(host->string(), {"--version"}, runner.service_user);
    if (!version) {
      answer.problems.push_back(version.error().message);
      transient = true;
    } else if (version->exit_code != 0) {
      answer.problems.push_back("'" + toolkit.nvcc + " --version' exited with " +
                                std::to_string(version->exit_code));
    } else if (!(answer.version = parse_nvcc_release(version->out))) {
      answer.problems.push_back("'" + toolkit.nvcc + " --version' printed no release line");
    }
    // Older nvcc lack --list-gpu-arch; the catalog's list for the version stands in.
    auto archs = run_unprivileged(host->string(), {"--list-gpu-arch"}, runner.service_user);
    if (archs && archs->exit_code == 0) {
      auto list = parse_gpu_arch_list(archs->out);
      if (!list.empty()) answer.archs = std::move(list);
    }
    // A timeout or a failed start may not happen next time: only settled answers are kept.
    if (identity && !transient) runner.cache.store(*identity, answer);
  }
  toolkit.nvcc_version = answer.version;
  if (answer.version) toolkit.nvcc_version_source = "nvcc --version";
  if (answer.archs) {
    toolkit.archs = answer.archs;
    toolkit.archs_source = "nvcc --list-gpu-arch";
  }
  toolkit.problems.insert(toolkit.problems.end(), answer.problems.begin(), answer.problems.end());
}

}  // namespace

// Plain scanning, not std::regex: the output can be long and libstdc++'s regex recurses once per
// character.
std::optional<std::string> parse_nvcc_release(std::string_view output) {
  constexpr std::string_view marker = "release ";
  for (size_t at = output.find(marker); at != std::string_view::npos;
       at = output.find(marker, at + 1)) {
    size_t begin = at + marker.size();
    auto major = digits_at(output, begin);
    size_t dot = begin + major.size();
    if (major.empty() || dot >= output.size() || output[dot] != '.') continue;
    auto minor = digits_at(output, dot + 1);
    size_t comma = dot + 1 + minor.size();
    if (minor.empty() || comma >= output.size() || output[comma] != ',') continue;
    return std::string(output.substr(begin, comma - begin));
  }
  return std::nullopt;
}

std::vector<int> parse_gpu_arch_list(std::string_view output) {
  std::vector<int> archs;
  constexpr std::string_view marker = "compute_";
  for (size_t at = output.find(marker); at != std::string_view::npos;
       at = output.find(marker, at + 1)) {
    auto digits = digits_at(output, at + marker.size());
    if (digits.empty() || digits.size() > 4) continue;
    int sm = std::stoi(std::string(digits));
    if (std::find(archs.begin(), archs.end(), sm) == archs.end()) archs.push_back(sm);
  }
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::optional<std::string> parse_cuda_header_version(std::string_view header) {
  // `#` [blanks] `define` blanks `CUDA_VERSION` blanks digits, at the start of a line.
  size_t line = 0;
  while (line < header.size()) {
    size_t end = header.find('\n', line);
    if (end == std::string_view::npos) end = header.size();
    std::string_view text = header.substr(line, end - line);
    line = end + 1;
    size_t at = 0;
    auto skip_blanks = [&] {
      size_t from = at;
      while (at < text.size() && is_blank(text[at])) ++at;
      return at > from;
    };
    auto word = [&](std::string_view expected) {
      if (text.substr(at, expected.size()) != expected) return false;
      at += expected.size();
      return true;
    };
    skip_blanks();
    if (!word("#")) continue;
    skip_blanks();
    if (!word("define") || !skip_blanks() || !word("CUDA_VERSION") || !skip_blanks()) continue;
    auto digits = digits_at(text, at);
    if (digits.empty() || digits.size() > 9) continue;
    auto version = version_from_cuda_int(std::stoll(std::string(digits)));
    return version.major_minor();
  }
  return std::nullopt;
}

std::optional<std::string> parse_version_json(std::string_view text) {
  return json_member_version(text, "cuda");
}

std::optional<std::string> parse_version_json_nvcc(std::string_view text) {
  return json_member_version(text, "cuda_nvcc");
}

void probe_toolkit(const NodeFs& node, ToolkitFact& toolkit, NvccRunner* runner) {
  toolkit.root_exists = node.is_directory(toolkit.root);
  toolkit.resolved_root = node.resolve(toolkit.root).value_or(toolkit.root);
  toolkit.nvcc_exists = node.is_executable_file(toolkit.nvcc);
  if (auto text = node.read(toolkit.root + "/version.json", kVersionJsonLimit)) {
    toolkit.json_version = parse_version_json(*text);
    if (auto nvcc = parse_version_json_nvcc(*text)) {
      toolkit.nvcc_version = major_minor(*nvcc);
      toolkit.nvcc_version_source = "version.json cuda_nvcc " + *nvcc;
    }
  }
  if (!toolkit.nvcc_version)
    if (auto wheel = nvcc_wheel_version(node, toolkit.resolved_root)) {
      toolkit.nvcc_version = major_minor(*wheel);
      toolkit.nvcc_version_source = "nvidia-cuda-nvcc dist-info " + *wheel;
    }
  if (auto text = node.read_head(toolkit.root + "/include/cuda.h", kCudaHeaderHead))
    toolkit.header_version = parse_cuda_header_version(*text);
  if (toolkit.nvcc_exists && runner && !toolkit.version()) ask_nvcc(node, toolkit, *runner);
  toolkit.cudart = "";
  for (std::string directory : {"lib64", "lib"})
    for (const auto& entry : node.list(toolkit.root + "/" + directory))
      if (entry.starts_with("libcudart.so") && toolkit.cudart->empty())
        toolkit.cudart = directory + "/" + entry;
  toolkit.runtime_header = node.exists(toolkit.root + "/include/cuda_runtime.h");
  if (!toolkit.archs)
    if (auto version = parse_version(toolkit.version().value_or(""))) {
      toolkit.archs = archs_for_nvcc(*version);
      toolkit.archs_source = "catalog for CUDA " + version->major_minor();
      if (toolkit.archs->empty()) toolkit.archs.reset();
    }
}

}  // namespace gl
