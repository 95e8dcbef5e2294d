// SPDX-License-Identifier: Apache-2.0
#pragma once
// The upgrade gate's outside world as fakes: an engine that answers each measurement as
// scripted (and counts them), and a record kept in memory (or a read that fails).

#include <optional>
#include <string>
#include <vector>

#include "supervise/gate_check.hpp"

namespace gl::testing {

class FakeGateEngine final : public GateEngine {
 public:
  explicit FakeGateEngine(Result<GateMeasurement> answer) : answer_(std::move(answer)) {}
  Result<GateMeasurement> measure(const GateSettings& settings) override {
    asked.push_back(settings);
    return answer_;
  }
  std::vector<GateSettings> asked;

 private:
  Result<GateMeasurement> answer_;
};

class FakeGateRecords final : public GateRecords {
 public:
  Result<std::optional<GateRecord>> load() const override {
    if (!load_error.empty()) return fail(load_error);
    return record;
  }
  Result<void> save(const GateRecord& saved) override {
    if (!save_error.empty()) return fail(save_error);
    record = saved;
    ++saves;
    return {};
  }
  std::optional<GateRecord> record;
  std::string load_error;  // not empty: load() fails with it
  std::string save_error;  // not empty: save() fails with it
  int saves = 0;
};

}  // namespace gl::testing
