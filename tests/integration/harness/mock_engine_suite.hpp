// SPDX-License-Identifier: Apache-2.0
#pragma once
// A GoogleTest suite over one MockEngineHost, booted once for all its tests and powered off after
// them. A suite derives from MockEngineSuite<Itself> and defines
//   static gpulaunch::testing::MockEngineHost* new_host();
// (where its work directory is, which binary); its tests then call the helpers below.

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_host.hpp"

namespace gpulaunch::testing {

template <class Suite>
class MockEngineSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    host_ = Suite::new_host();
    booted_ = host_->boot();
  }

  static void TearDownTestSuite() {
    delete host_;  // powers the manager off
    host_ = nullptr;
  }

  void SetUp() override {
    if (!booted_) {
      if (!host_->skip_reason().empty()) GTEST_SKIP() << host_->skip_reason();
      FAIL() << "the private systemd did not boot";
    }
  }

  static MockEngineHost& host() { return *host_; }
  static ExecResult gpulaunch(const std::string& arguments) { return host_->gpulaunch(arguments); }
  static void set_mode(const std::string& name, const std::string& mode) {
    host_->set_mode(name, mode);
  }
  static nlohmann::json status_of(const std::string& name) { return host_->status_of(name); }
  static nlohmann::json events_of(const std::string& name) { return host_->events_of(name); }
  static bool has_event(const nlohmann::json& events, const std::string& kind) {
    return !event_of(events, kind).empty();
  }
  static std::vector<std::string> recorded_argv(const std::string& name) {
    return host_->recorded_argv(name);
  }
  template <class Predicate>
  static bool eventually(Predicate done, std::chrono::seconds limit = std::chrono::seconds(60)) {
    return MockEngineHost::eventually(done, limit);
  }

 private:
  inline static MockEngineHost* host_ = nullptr;
  inline static bool booted_ = false;
};

}  // namespace gpulaunch::testing
