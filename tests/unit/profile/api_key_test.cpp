// SPDX-License-Identifier: Apache-2.0
#include "profile/api_key.hpp"

#include <gtest/gtest.h>

#include "profile/secret_files.hpp"

namespace gl {
namespace {

struct KeyCase {
  const char* name;
  EngineKind engine;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> secrets;
  bool keyed;
  bool usable;
  std::string where;  // a part of ApiKeyUse::where
  std::string credential;
  std::string variable;
};

Profile keyed_profile(const KeyCase& c) {
  Profile profile;
  profile.name = "k26";
  profile.engine.kind = c.engine;
  profile.env = c.env;
  profile.secrets = c.secrets;
  return profile;
}

// Every way each engine takes its key, against the probe: only a key in [secrets], as the one
// source, is one gpulaunch may send.
TEST(ApiKey, EveryWayEachEngineTakesItsKeyIsRecognised) {
  Profile named;
  named.name = "k26";
  const std::string llama_credential = credential_path(named, "LLAMA_KEY");
  const std::map<std::string, std::string> llama_secret{{"LLAMA_KEY", "/etc/keys/llama"}};
  const std::map<std::string, std::string> vllm_secret{{"VLLM_API_KEY", "/etc/keys/vllm"}};
  const std::vector<KeyCase> cases = {
      {"vllm no key", EngineKind::vllm, {"--port", "8000"}, {}, {}, false, true, "", "", ""},
      {"vllm --api-key KEY",
       EngineKind::vllm,
       {"--api-key", "k"},
       {},
       {},
       true,
       false,
       "--api-key in the engine's command line",
       "",
       ""},
      {"vllm --api-key=KEY",
       EngineKind::vllm,
       {"--api-key=k"},
       {},
       {},
       true,
       false,
       "--api-key",
       "",
       ""},
      {"vllm --api_key KEY",
       EngineKind::vllm,
       {"--api_key", "k"},
       {},
       {},
       true,
       false,
       "--api_key",
       "",
       ""},
      {"vllm --api_key=KEY",
       EngineKind::vllm,
       {"--api_key=k"},
       {},
       {},
       true,
       false,
       "--api_key",
       "",
       ""},
      {"vllm --config FILE",
       EngineKind::vllm,
       {"--config", "/etc/v.yaml"},
       {},
       {},
       true,
       false,
       "--config /etc/v.yaml, which gpulaunch does not read",
       "",
       ""},
      {"vllm --config=FILE",
       EngineKind::vllm,
       {"--config=/etc/v.yaml"},
       {},
       {},
       true,
       false,
       "--config /etc/v.yaml",
       "",
       ""},
      {"vllm VLLM_API_KEY in [env]",
       EngineKind::vllm,
       {},
       {{"VLLM_API_KEY", "k"}},
       {},
       true,
       false,
       "VLLM_API_KEY in [env]",
       "",
       ""},
      {"vllm VLLM_API_KEY in [secrets]",
       EngineKind::vllm,
       {},
       {},
       vllm_secret,
       true,
       true,
       "VLLM_API_KEY in [secrets]",
       "VLLM_API_KEY",
       "VLLM_API_KEY"},
      {"vllm [secrets] and a flag: two keys",
       EngineKind::vllm,
       {"--api-key", "k"},
       {},
       vllm_secret,
       true,
       false,
       "--api-key in the engine's command line and VLLM_API_KEY",
       "",
       ""},
      {"vllm another secret is no key",
       EngineKind::vllm,
       {},
       {},
       {{"HF_TOKEN", "/etc/hf"}},
       false,
       true,
       "",
       "",
       ""},
      {"vllm takes no key file",
       EngineKind::vllm,
       {"--api-key-file", "/k"},
       {},
       {},
       false,
       true,
       "",
       "",
       ""},
      {"llamacpp --api-key KEY",
       EngineKind::llamacpp,
       {"--api-key", "k"},
       {},
       {},
       true,
       false,
       "--api-key in the engine's command line",
       "",
       ""},
      // llama.cpp reads '_' as '-' in a "--" argument.
      {"llamacpp --api_key KEY",
       EngineKind::llamacpp,
       {"--api_key", "k"},
       {},
       {},
       true,
       false,
       "--api_key in the engine's command line",
       "",
       ""},
      {"llamacpp --api_key_file on a credential",
       EngineKind::llamacpp,
       {"--api_key_file", llama_credential},
       {},
       llama_secret,
       true,
       true,
       "--api_key_file",
       "LLAMA_KEY",
       ""},
      {"llamacpp --api-key-file on a credential",
       EngineKind::llamacpp,
       {"--api-key-file", llama_credential},
       {},
       llama_secret,
       true,
       true,
       "--api-key-file",
       "LLAMA_KEY",
       ""},
      {"llamacpp --api-key-file=credential",
       EngineKind::llamacpp,
       {"--api-key-file=" + llama_credential},
       {},
       llama_secret,
       true,
       true,
       "--api-key-file",
       "LLAMA_KEY",
       ""},
      {"llamacpp --api-key-file elsewhere",
       EngineKind::llamacpp,
       {"--api-key-file", "/etc/k"},
       {},
       llama_secret,
       true,
       false,
       "--api-key-file /etc/k",
       "",
       ""},
      {"llamacpp LLAMA_API_KEY in [env]",
       EngineKind::llamacpp,
       {},
       {{"LLAMA_API_KEY", "k"}},
       {},
       true,
       false,
       "LLAMA_API_KEY in [env]",
       "",
       ""},
      {"llamacpp LLAMA_API_KEY in [secrets]",
       EngineKind::llamacpp,
       {},
       {},
       {{"LLAMA_API_KEY", "/etc/k"}},
       true,
       true,
       "LLAMA_API_KEY in [secrets]",
       "LLAMA_API_KEY",
       "LLAMA_API_KEY"},
      // SGLang's key guards neither /health_generate nor /metrics.
      {"sglang --api-key", EngineKind::sglang, {"--api-key", "k"}, {}, {}, false, true, "", "", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Profile profile = keyed_profile(c);
    const ApiKeyUse use = find_api_key(engine_row(c.engine).liveness.api_key, c.argv, profile);
    EXPECT_EQ(use.keyed, c.keyed);
    EXPECT_EQ(use.usable(), c.usable);
    EXPECT_NE(use.where.find(c.where), std::string::npos) << use.where;
    EXPECT_EQ(use.credential.value_or(""), c.credential);
    EXPECT_EQ(use.variable, c.variable);
  }
}

}  // namespace
}  // namespace gl
