#include "facts/toolkit_probe.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/process.hpp"

namespace gl {

std::optional<std::string> parse_nvcc_release(std::string_view output) {
  static const std::regex release(R"(release (\d+\.\d+),)");
  std::match_results<std::string_view::const_iterator> match;
  if (std::regex_search(output.begin(), output.end(), match, release)) return match[1].str();
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
  static const std::regex define(R"(#define\s+CUDA_VERSION\s+(\d+))");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(header.begin(), header.end(), match, define)) return std::nullopt;
  long long encoded = std::stoll(match[1].str());
  return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 1000) / 10);
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
