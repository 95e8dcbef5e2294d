// SPDX-License-Identifier: Apache-2.0
#include "catalog/engines.hpp"

#include <set>

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(Engines, EveryKindHasOneRowFoundByItsName) {
  std::set<std::string_view> names;
  for (const EngineRow& row : engine_rows()) {
    EXPECT_TRUE(names.insert(row.name).second) << "two rows named " << row.name;
    EXPECT_EQ(&engine_row(row.kind), &row) << row.name;
    EXPECT_EQ(parse_engine_kind(row.name), row.kind);
    EXPECT_EQ(engine_kind_name(row.kind), row.name);
    EXPECT_GT(row.default_port, 0) << row.name;
    EXPECT_TRUE(row.health_path.starts_with('/')) << row.name;
  }
  EXPECT_EQ(engine_kind_names().size(), engine_rows().size());
  EXPECT_FALSE(parse_engine_kind("sglng"));
  EXPECT_FALSE(parse_engine_kind("SGLang"));
}

TEST(Engines, RowsHoldWhatEachLauncherNeeds) {
  for (const EngineRow& row : engine_rows()) {
    // A Python engine names the package `check` looks for and pip installs.
    const bool python = row.launch == Launch::python_module || row.launch == Launch::venv_program;
    EXPECT_EQ(python, !row.import_module.empty()) << row.name;
    EXPECT_EQ(python, !row.pip_dist.empty()) << row.name;
    if (row.launch != Launch::argv) {
      EXPECT_FALSE(row.program.empty()) << row.name;
    }
    if (row.argv == ArgvBuilder::flags_only) {
      EXPECT_FALSE(row.host_flag.empty()) << row.name;
      EXPECT_FALSE(row.port_flag.empty()) << row.name;
    }
    if (!row.splits_ranks) {
      EXPECT_FALSE(row.no_ranks_hint.empty()) << row.name;
    }
    // The step-down halves a knob from its default or from what the argv sets; a fraction needs
    // a default to count down from.
    if (row.steps_down && !row.mem_fraction.flag.empty()) {
      EXPECT_TRUE(row.mem_fraction.engine_default) << row.name;
    }
  }
}

TEST(Engines, KindsWhereJoinsTheNamesLikeAMessage) {
  EXPECT_EQ(engine_kinds_where([](const EngineRow& row) { return row.dp_attention; }, "and"),
            "sglang");
  EXPECT_EQ(engine_kinds_where([](const EngineRow& row) { return row.speculative; }, "and"),
            "sglang and vllm");
  EXPECT_EQ(engine_kinds_where(
                [](const EngineRow& row) {
                  return row.kind == EngineKind::sglang || row.kind == EngineKind::vllm ||
                         row.kind == EngineKind::trtllm;
                },
                "or"),
            "sglang, vllm or trtllm");
  EXPECT_EQ(engine_kinds_where([](const EngineRow&) { return false; }, "or"), "");
}

TEST(Engines, PythonPackagesAreSpelledAsPipAndImportsSpellThem) {
  const EngineRow& trtllm = engine_row(EngineKind::trtllm);
  EXPECT_EQ(trtllm.pip_dist, "tensorrt-llm");
  EXPECT_EQ(trtllm.import_module, "tensorrt_llm");
  EXPECT_EQ(engine_row(EngineKind::sglang).default_port, 30000);
  EXPECT_EQ(engine_row(EngineKind::vllm).default_port, 8000);
}

TEST(Engines, LlamaServerIsAnExecutableServingOneLocalFile) {
  const EngineRow& llama = engine_row(EngineKind::llamacpp);
  EXPECT_EQ(llama.launch, Launch::executable);
  EXPECT_EQ(llama.model, ModelSource::local_file);
  EXPECT_EQ(llama.default_port, 8080);
  EXPECT_FALSE(llama.splits_ranks);
  EXPECT_FALSE(llama.multi_node);
  EXPECT_EQ(llama.max_requests.flag, "--parallel");
  EXPECT_EQ(llama.context.short_flag, "-c");
}

}  // namespace
}  // namespace gl
