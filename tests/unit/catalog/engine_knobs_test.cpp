// SPDX-License-Identifier: Apache-2.0
// The pass-through engine keys (catalog/engine_knobs) against what reads them: the schema has
// each with the table's type and bounds, each row names a flag for some engine (and where a
// pass-through flag was read), and the man page's ENGINES section says, per engine and knob,
// whether the supervisor steps it down.

#include "catalog/engine_knobs.hpp"

#include <set>
#include <string>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "profile/schema.hpp"
#include "supervise/step_down.hpp"
#include "util/process.hpp"

namespace gl {
namespace {

// The man page's escaping of names and keys: every hyphen a literal one.
std::string literal(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST(EngineKnobs, EachKeyIsInTheSchemaWithTheTablesTypeAndBounds) {
  std::set<std::string_view> keys;
  for (const EngineKnobKey& knob : engine_knob_keys()) {
    EXPECT_TRUE(keys.insert(knob.key).second) << knob.key << " twice";
    EXPECT_TRUE(knob.key.starts_with("engine.")) << knob.key;
    const KeySpec* spec = find_key(knob.key);
    ASSERT_NE(spec, nullptr) << knob.key;
    EXPECT_EQ(spec->type, knob.value == KnobValue::integer ? KeyType::integer : KeyType::number);
    ASSERT_TRUE(spec->range);
    EXPECT_EQ(spec->range->low, knob.low);
    EXPECT_EQ(spec->range->high, knob.high);
    EXPECT_EQ(spec->range->above_low, knob.above_low);
    EXPECT_EQ(spec->help, knob.help);
  }
}

TEST(EngineKnobs, EachKnobIsSomeEnginesFlagAndSaysWhereItWasRead) {
  for (const EngineKnobKey& knob : engine_knob_keys()) {
    bool any = false;
    for (const EngineRow& row : engine_rows()) any |= !engine_knob_flag(knob, row.kind).empty();
    EXPECT_TRUE(any) << knob.key << " is no engine's flag";
    // A flag spelled here rather than in the engine's row names its upstream source.
    EXPECT_TRUE(knob.row_knob == nullptr || knob.flags.empty()) << knob.key;
    for (const KnobFlag& flag : knob.flags) {
      EXPECT_TRUE(flag.flag.starts_with("-")) << knob.key;
      EXPECT_FALSE(flag.source.empty()) << knob.key << " " << flag.flag;
    }
    // Only a knob whose flag and default sit in the engine's row can be stepped down.
    if (!knob.row_knob) {
      EXPECT_EQ(knob.step_down, KnobStepDown::never) << knob.key;
    }
  }
}

TEST(EngineKnobs, ArgumentsKeepIntegersWholeAndFractionsShort) {
  const EngineKnobKey* requests = find_engine_knob_key("engine.max_requests");
  const EngineKnobKey* fraction = find_engine_knob_key("engine.mem_fraction");
  ASSERT_TRUE(requests && fraction);
  EXPECT_EQ(engine_knob_argument(*requests, 64), "64");
  EXPECT_EQ(engine_knob_argument(*requests, 1'000'000), "1000000");
  EXPECT_EQ(engine_knob_argument(*fraction, 0.85), "0.85");
  EXPECT_EQ(find_engine_knob_key("engine.args"), nullptr);
}

// The paragraph of gpulaunch.toml(5)'s ENGINES section about `name`.
std::string engine_paragraph(const std::string& page, std::string_view name) {
  const auto section = page.find(".SH ENGINES");
  if (section == std::string::npos) return {};
  const std::string head = fmt::format(".TP\n\\fB{}\\fR ", literal(name));
  const auto begin = page.find(head, section);
  if (begin == std::string::npos) return {};
  const auto end = page.find("\n.", begin + head.size());
  return page.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

TEST(EngineKnobs, TheManPageSaysForEachKnobWhetherItStepsDown) {
  auto printed = run_process(GL_GPULAUNCH_BINARY, {"internal-man", "5"}, std::chrono::seconds(10));
  ASSERT_TRUE(printed) << printed.error().message;
  ASSERT_EQ(printed->exit_code, 0);
  const std::string& page = printed->out;
  for (const EngineRow& row : engine_rows()) {
    const std::string paragraph = engine_paragraph(page, row.name);
    ASSERT_FALSE(paragraph.empty()) << row.name << " has no paragraph under ENGINES";
    const auto policies = knob_policies(row.kind);
    for (const EngineKnobKey& knob : engine_knob_keys()) {
      const std::string_view flag = engine_knob_flag(knob, row.kind);
      const std::string named =
          fmt::format("\\fB{}\\fR is \\fB{}\\fR, ", literal(knob.key), literal(flag));
      const auto at = paragraph.find(named);
      if (flag.empty()) {
        EXPECT_EQ(paragraph.find(fmt::format("\\fB{}\\fR is", literal(knob.key))),
                  std::string::npos)
            << row.name << " names " << knob.key << ", which it has no flag for";
        continue;
      }
      ASSERT_NE(at, std::string::npos) << row.name << " does not name " << knob.key;
      const std::string_view said = std::string_view(paragraph).substr(at + named.size());
      const bool leaves = said.starts_with("which the supervisor leaves as it is");
      const bool lowers = said.starts_with("lowered after");
      EXPECT_TRUE(leaves != lowers) << row.name << " " << knob.key << ": " << said.substr(0, 60);
      // From the table: a knob that never steps down, or an engine the supervisor steps
      // nothing of, is left as it is; what is lowered is what step_down's policy lowers.
      if (knob.step_down == KnobStepDown::never || !row.steps_down) {
        EXPECT_TRUE(leaves) << row.name << " " << knob.key;
      }
      for (const KnobPolicy& policy : policies) {
        if (policy.key == knob.key) {
          EXPECT_EQ(lowers, policy.step != KnobStep::untouched) << row.name << " " << knob.key;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gl
