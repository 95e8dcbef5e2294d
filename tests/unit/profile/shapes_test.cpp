// SPDX-License-Identifier: Apache-2.0
// Value shapes are loops, not std::regex: each grammar accepts and refuses what its regex did,
// and a value of any length is judged in linear time on a small stack. A long word in model.path,
// nodes.hosts or speculative.algorithm once overflowed an 8 MB stack inside libstdc++'s regex.

#include "profile/shapes.hpp"

#include <pthread.h>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

// Runs `body` on a thread whose stack is `stack_bytes`: anything that recursed per character
// would overflow it and crash the test.
void on_small_stack(size_t stack_bytes, std::function<void()> body) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, &body), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
}

TEST(Shapes, HubIds) {
  EXPECT_TRUE(is_hub_id("moonshotai/Kimi-K2.6"));
  EXPECT_TRUE(is_hub_id("gpt2"));
  EXPECT_FALSE(is_hub_id("org/name/extra"));
  EXPECT_FALSE(is_hub_id("-org/name"));
  EXPECT_FALSE(is_hub_id("org/.name"));
  EXPECT_FALSE(is_hub_id("org name"));
  EXPECT_FALSE(is_hub_id("org/"));
  EXPECT_FALSE(is_hub_id(""));
}

TEST(Shapes, HostsAndHostPorts) {
  EXPECT_TRUE(is_host("10.0.0.1"));
  EXPECT_TRUE(is_host("node-1.example"));
  EXPECT_TRUE(is_host("a"));
  EXPECT_TRUE(is_host("[fe80::1]"));
  EXPECT_FALSE(is_host("-node"));
  EXPECT_FALSE(is_host("node."));
  EXPECT_FALSE(is_host("a b"));
  EXPECT_FALSE(is_host("[]"));
  EXPECT_FALSE(is_host("[fe80::1"));
  EXPECT_EQ(host_port("10.0.0.1:5000"), 5000);
  EXPECT_EQ(host_port("[::1]:65535"), 65535);
  EXPECT_FALSE(host_port("10.0.0.1:0"));
  EXPECT_FALSE(host_port("10.0.0.1:65536"));
  EXPECT_FALSE(host_port("10.0.0.1:123456"));
  EXPECT_FALSE(host_port("10.0.0.1"));
  EXPECT_FALSE(host_port(":5000"));
  EXPECT_FALSE(host_port("a:b:5000"));
}

// What OpenSSH 9.6's ssh refuses from -l ("remote username contains invalid characters").
TEST(Shapes, SshUsersOpenSshAccepts) {
  EXPECT_TRUE(is_ssh_user("admin"));
  EXPECT_TRUE(is_ssh_user("svc.gpu-ops_1"));
  EXPECT_TRUE(is_ssh_user("DOMAIN\\user"));
  EXPECT_TRUE(is_ssh_user("a-b c"));
  EXPECT_FALSE(is_ssh_user(""));
  EXPECT_FALSE(is_ssh_user("-oProxyCommand=x"));
  EXPECT_FALSE(is_ssh_user("admin -x"));
  EXPECT_FALSE(is_ssh_user("admin\\"));
  for (char c : std::string_view("'`\";&<>|(){}"))
    EXPECT_FALSE(is_ssh_user(std::string("ad") + c + "min")) << c;
}

TEST(Shapes, VersionsArchitecturesAndDevices) {
  EXPECT_TRUE(is_toolkit_version("13.0"));
  EXPECT_TRUE(is_toolkit_version("12.8.1"));
  EXPECT_FALSE(is_toolkit_version("13"));
  EXPECT_FALSE(is_toolkit_version("130.0"));
  EXPECT_FALSE(is_toolkit_version("13.0.1234"));
  EXPECT_TRUE(is_arch_list("12.0f"));
  EXPECT_TRUE(is_arch_list("9.0a 10.0a 12.0"));
  EXPECT_FALSE(is_arch_list("9.0a 10.0a;12.0"));
  EXPECT_FALSE(is_arch_list("9.0+PTX"));
  EXPECT_FALSE(is_arch_list("9.0a  10.0a"));
  EXPECT_FALSE(is_arch_list("sm_90"));
  EXPECT_FALSE(is_arch_list("9.0 "));
  EXPECT_TRUE(is_compute_capability("12.0"));
  EXPECT_FALSE(is_compute_capability("12.00"));
  EXPECT_TRUE(is_gpu_device("0"));
  EXPECT_TRUE(is_gpu_device("GPU-5b1f6c5e-1234"));
  EXPECT_FALSE(is_gpu_device("GPU-1234"));  // under 8
  EXPECT_FALSE(is_gpu_device("12345"));
  EXPECT_FALSE(is_gpu_device("gpu-5b1f6c5e-1234"));
}

TEST(Shapes, NamesSizesAndDirectives) {
  EXPECT_TRUE(is_word("EAGLE3"));
  EXPECT_FALSE(is_word("EAGLE 3"));
  EXPECT_FALSE(is_word(""));
  EXPECT_TRUE(is_account_name("sglang"));
  EXPECT_TRUE(is_account_name(std::string(32, 'a')));
  EXPECT_FALSE(is_account_name(std::string(33, 'a')));
  EXPECT_FALSE(is_account_name("Root"));
  EXPECT_TRUE(is_memory_size("900G"));
  EXPECT_TRUE(is_memory_size("80%"));
  EXPECT_TRUE(is_memory_size("100%"));
  EXPECT_TRUE(is_memory_size("infinity"));
  EXPECT_FALSE(is_memory_size("101%"));
  EXPECT_FALSE(is_memory_size("0"));
  EXPECT_FALSE(is_memory_size("12X"));
  EXPECT_FALSE(is_memory_size("12345678901234567"));
  EXPECT_TRUE(is_directive("LimitCORE=infinity"));
  EXPECT_TRUE(is_directive("X="));
  EXPECT_FALSE(is_directive("limitCORE=1"));
  EXPECT_FALSE(is_directive("Limit CORE=1"));
  EXPECT_TRUE(is_variable_name("HF_TOKEN"));
  EXPECT_FALSE(is_variable_name("1X"));
  EXPECT_FALSE(is_variable_name("A-B"));
}

TEST(Shapes, JudgeAMegabyteWordOnASmallStack) {
  const std::string word(1 << 20, 'a');
  on_small_stack(64 * 1024, [&] {
    EXPECT_TRUE(is_hub_id(word));
    EXPECT_TRUE(is_host(word));
    EXPECT_TRUE(is_word(word));
    EXPECT_FALSE(is_variable_name(word + "-"));
    EXPECT_FALSE(host_port(word));
  });
}

// Through the whole chain, under a stack far smaller than what libstdc++'s regex needed for the
// same word: each key's bound answers first, at the value's location.
TEST(Shapes, LongWordsInAProfileGetTheLengthErrorNotACrash) {
  const std::string word(200'000, 'a');
  struct Case {
    std::string text;
    std::string error;
  };
  const std::string head = "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n";
  const std::vector<Case> cases{
      {head + "[model]\npath = \"" + word + "\"\n",
       "/p/long.toml:5:8: 'model.path' is 200000 bytes long, over the limit of 4096"},
      {head + "[model]\npath = \"/m\"\n[nodes]\nhosts = [\"" + word + "\"]\n",
       "/p/long.toml:7:10: 'nodes.hosts' element 0 is 200000 bytes long, over the limit of 255"},
      {head + "[model]\npath = \"/m\"\n[speculative]\nalgorithm = \"" + word + "\"\n",
       "/p/long.toml:7:13: 'speculative.algorithm' is 200000 bytes long, over the limit of 64"},
  };
  for (const auto& test : cases) {
    on_small_stack(256 * 1024, [&] {
      MemorySource source({{"/p/long.toml", test.text}});
      auto profile = load_profile(source, "/p/long.toml");
      ASSERT_FALSE(profile);
      EXPECT_EQ(profile.error().message, test.error);
    });
  }
}

// A value longer than a profile file may be (1 MiB), as a table built in memory.
TEST(Shapes, AMegabyteHubIdGetsTheLengthError) {
  MergedProfile merged;
  merged.name = "big";
  merged.file = "/p/big.toml";
  merged.table.insert("engine", toml::table{{"kind", "sglang"}, {"venv", "/opt/venv"}});
  merged.table.insert("model", toml::table{{"path", std::string(1 << 20, 'x')}});
  on_small_stack(256 * 1024, [&] {
    auto profile = validate_profile(merged);
    ASSERT_FALSE(profile);
    EXPECT_EQ(profile.error().message,
              "/p/big.toml:1:1: 'model.path' is 1048576 bytes long, over the limit of 4096");
  });
}

}  // namespace
}  // namespace gl
