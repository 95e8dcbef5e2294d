#include "cli/fingerprint_inputs.hpp"

#include <cctype>
#include <filesystem>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "util/atomic_file.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;

std::string trim(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
  return text;
}

std::string toolkit_version(const fs::path& cuda_home) {
  if (auto text = read_file(cuda_home / "version.json", 1 << 20)) {
    auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_object() && json.contains("cuda") && json["cuda"].is_object() &&
        json["cuda"].contains("version") && json["cuda"]["version"].is_string())
      return json["cuda"]["version"].get<std::string>();
  }
  // Older layouts: "#define CUDA_VERSION 13000" means 13.0.
  if (auto text = read_file(cuda_home / "include" / "cuda.h", 4 << 20)) {
    std::smatch match;
    static const std::regex define(R"(#define\s+CUDA_VERSION\s+(\d+))");
    if (std::regex_search(*text, match, define)) {
      int version = std::stoi(match[1].str());
      return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
    }
  }
  return {};
}

// "torch-2.9.0+cu130.dist-info" -> {"torch", "2.9.0+cu130"}, names lowercased with '-' as '_'.
std::map<std::string, std::string> installed_packages(const fs::path& venv) {
  std::map<std::string, std::string> packages;
  std::error_code error;
  for (const auto& lib : fs::directory_iterator(venv / "lib", error)) {
    if (!lib.path().filename().string().starts_with("python")) continue;
    for (const auto& entry : fs::directory_iterator(lib.path() / "site-packages", error)) {
      std::string name = entry.path().filename().string();
      if (!name.ends_with(".dist-info")) continue;
      name.resize(name.size() - std::string_view(".dist-info").size());
      auto dash = name.find('-');
      if (dash == std::string::npos) continue;
      std::string package = name.substr(0, dash);
      for (char& c : package) c = c == '-' ? '_' : static_cast<char>(std::tolower(c));
      packages[package] = name.substr(dash + 1);
    }
  }
  return packages;
}

}  // namespace

FingerprintInputs fingerprint_inputs_for(const Profile& profile) {
  FingerprintInputs inputs;
  inputs.engine = std::string(engine_kind_name(profile.engine.kind));
  inputs.arch_list = profile.toolkit.arch_list.value_or("");
  if (profile.gpus.arch) inputs.gpu_archs.push_back(*profile.gpus.arch);
  if (profile.toolkit.cuda_home) {
    inputs.toolkit_path = *profile.toolkit.cuda_home;
    inputs.toolkit_version = toolkit_version(*profile.toolkit.cuda_home);
  }
  if (auto driver = read_file("/sys/module/nvidia/version", 4096))
    inputs.driver_version = trim(*driver);
  if (profile.engine.venv) {
    auto packages = installed_packages(*profile.engine.venv);
    auto version_of = [&](const char* name) {
      auto found = packages.find(name);
      return found == packages.end() ? std::string() : found->second;
    };
    inputs.torch_version = version_of("torch");
    inputs.flashinfer_version = version_of("flashinfer_python");
    inputs.triton_version = version_of("triton");
    const char* engine_package = profile.engine.kind == EngineKind::sglang   ? "sglang"
                                 : profile.engine.kind == EngineKind::vllm   ? "vllm"
                                 : profile.engine.kind == EngineKind::trtllm ? "tensorrt_llm"
                                                                             : "";
    inputs.engine_version = version_of(engine_package);
  }
  return inputs;
}

}  // namespace gl
