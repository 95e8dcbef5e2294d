#include "facts/toolkit_probe.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/process.hpp"

namespace gl {

namespace {

bool is_digit_char(char c) {
  return c >= '0' && c <= '9';
}

// The digits at `at`, moving past them.
std::string_view digits_at(std::string_view text, size_t& at) {
  const size_t start = at;
  while (at < text.size() && is_digit_char(text[at])) ++at;
  return text.substr(start, at - start);
}

// The whitespace (as a regex's \s) at `at`, moving past it; whether there was any.
bool skip_space(std::string_view text, size_t& at) {
  const size_t start = at;
  while (at < text.size() &&
         std::string_view(" \t\n\r\v\f").find(text[at]) != std::string_view::npos)
    ++at;
  return at > start;
}

}  // namespace

// Plain scanning, not std::regex: the output can be long and libstdc++'s regex recurses once per
// character.
std::optional<std::string> parse_nvcc_release(std::string_view output) {
  constexpr std::string_view kRelease = "release ";
  for (size_t found = output.find(kRelease); found != std::string_view::npos;
       found = output.find(kRelease, found + 1)) {
    size_t at = found + kRelease.size();
    const size_t start = at;
    if (digits_at(output, at).empty() || at >= output.size() || output[at] != '.') continue;
    ++at;
    if (digits_at(output, at).empty() || at >= output.size() || output[at] != ',') continue;
    return std::string(output.substr(start, at - start));
  }
  return std::nullopt;
}

std::vector<int> parse_gpu_arch_list(std::string_view output) {
  std::vector<int> archs;
  std::istringstream lines{std::string(output)};
  std::string line;
  while (std::getline(lines, line)) {
    auto at = line.find("compute_");
    if (at == std::string::npos) continue;
    int sm = 0;
    bool digits = false;
    for (size_t i = at + 8; i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]));
         ++i) {
      sm = sm * 10 + (line[i] - '0');
      digits = true;
    }
    if (digits && std::find(archs.begin(), archs.end(), sm) == archs.end()) archs.push_back(sm);
  }
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::optional<std::string> parse_cuda_header_version(std::string_view header) {
  constexpr std::string_view kDefine = "#define";
  constexpr std::string_view kName = "CUDA_VERSION";
  for (size_t found = header.find(kDefine); found != std::string_view::npos;
       found = header.find(kDefine, found + 1)) {
    size_t at = found + kDefine.size();
    if (!skip_space(header, at) || !header.substr(at).starts_with(kName)) continue;
    at += kName.size();
    if (!skip_space(header, at)) continue;
    const std::string_view digits = digits_at(header, at);
    long long encoded = 0;
    if (digits.empty() ||
        std::from_chars(digits.data(), digits.data() + digits.size(), encoded).ec != std::errc{})
      continue;
    return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 1000) / 10);
  }
  return std::nullopt;
}

std::optional<std::string> parse_version_json(std::string_view text) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  auto cuda = json.find("cuda");
  if (cuda == json.end() || !cuda->is_object()) return std::nullopt;
  auto version = cuda->find("version");
  if (version == cuda->end() || !version->is_string()) return std::nullopt;
  return version->get<std::string>();
}

void probe_toolkit(const NodeFs& node, ToolkitFact& toolkit, const ToolkitFact* same_nvcc) {
  toolkit.root_exists = node.is_directory(toolkit.root);
  toolkit.resolved_root = node.resolve(toolkit.root);
  toolkit.nvcc_exists = node.is_executable_file(toolkit.nvcc);
  if (auto text = node.read(toolkit.root + "/version.json", 64 * 1024))
    toolkit.json_version = parse_version_json(*text);
  // CUDA_VERSION sits near the top of cuda.h; the whole header is ~1 MB.
  if (auto text = node.read(toolkit.root + "/include/cuda.h", 256 * 1024))
    toolkit.header_version = parse_cuda_header_version(*text);
  if (!toolkit.nvcc_exists) return;
  if (same_nvcc) {
    toolkit.nvcc_version = same_nvcc->nvcc_version;
    toolkit.archs = same_nvcc->archs;
    toolkit.problems = same_nvcc->problems;
    return;
  }
  std::string program = node.host_path(toolkit.nvcc).string();
  auto version = run_process(program, {"--version"});
  if (!version)
    toolkit.problems.push_back(version.error().message);
  else if (version->exit_code != 0)
    toolkit.problems.push_back("'" + toolkit.nvcc + " --version' exited with " +
                               std::to_string(version->exit_code));
  else if (!(toolkit.nvcc_version = parse_nvcc_release(version->out)))
    toolkit.problems.push_back("'" + toolkit.nvcc + " --version' printed no release line");
  // Older nvcc lack --list-gpu-arch; the rules then fall back to the table.
  auto archs = run_process(program, {"--list-gpu-arch"});
  if (archs && archs->exit_code == 0) {
    auto list = parse_gpu_arch_list(archs->out);
    if (!list.empty()) toolkit.archs = std::move(list);
  }
}

}  // namespace gl
