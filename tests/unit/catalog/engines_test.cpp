// SPDX-License-Identifier: Apache-2.0
#include "catalog/engines.hpp"

#include <set>

#include <gtest/gtest.h>

#include "util/version.hpp"

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

// The ceiling is how many steps record-exit counts without the GPUs: no GPU may get more.
TEST(Engines, NoGpuGetsADefaultAboveItsKnobsCeiling) {
  const GpuContext gpus[] = {{},
                             {16384, "Tesla T4", 1, 1},
                             {24564, "NVIDIA GeForce RTX 4090", 1, 1},
                             {46068, "NVIDIA L40S", 4, 1},
                             {81920, "NVIDIA A100-SXM4-80GB", 1, 1},
                             {81559, "NVIDIA H100 80GB HBM3", 8, 2},
                             {143771, "NVIDIA H200", 1, 1},
                             {183359, "NVIDIA B200", 8, 1}};
  for (const EngineRow& row : engine_rows())
    for (const EngineKnob* knob :
         {&row.mem_fraction, &row.max_requests, &row.cuda_graph_max_bs, &row.context})
      for (const GpuContext& context : gpus)
        if (auto value = knob_default(*knob, context)) {
          EXPECT_LE(value->value, knob->default_ceiling) << row.name << " " << knob->flag;
          EXPECT_GT(value->value, 0) << row.name << " " << knob->flag;
          EXPECT_FALSE(value->why.empty());
        }
}

TEST(Engines, SglangsShareFollowsTheGpusMemoryAsItComputesIt) {
  const EngineKnob& share = engine_row(EngineKind::sglang).mem_fraction;
  EXPECT_DOUBLE_EQ(knob_default(share, {143771, "NVIDIA H200", 1, 1})->value, 0.907);
  EXPECT_DOUBLE_EQ(knob_default(share, {143771, "NVIDIA H200", 8, 1})->value, 0.897);
  EXPECT_DOUBLE_EQ(knob_default(share, {81920, "NVIDIA A100-SXM4-80GB", 1, 1})->value, 0.836);
  EXPECT_DOUBLE_EQ(knob_default(share, {24564, "NVIDIA GeForce RTX 4090", 1, 1})->value, 0.72);
  EXPECT_DOUBLE_EQ(knob_default(share, {})->value, 0.95);
  // vLLM's are constants or thresholds.
  const EngineRow& vllm = engine_row(EngineKind::vllm);
  EXPECT_DOUBLE_EQ(knob_default(vllm.mem_fraction, {})->value, 0.92);
  EXPECT_DOUBLE_EQ(knob_default(vllm.max_requests, {81559, "NVIDIA H100 80GB HBM3", 1, 1})->value,
                   1024);
  EXPECT_DOUBLE_EQ(knob_default(vllm.max_requests, {81920, "NVIDIA A100-SXM4-80GB", 1, 1})->value,
                   256);
  EXPECT_DOUBLE_EQ(knob_default(vllm.max_requests, {46068, "NVIDIA L40S", 1, 1})->value, 256);
  // trtllm-serve's and llama-server's are their own business.
  EXPECT_FALSE(knob_default(engine_row(EngineKind::trtllm).mem_fraction, {}));
  EXPECT_FALSE(knob_default(engine_row(EngineKind::llamacpp).context, {}));
}

TEST(Engines, SpeculativeMethodsAreFoundInEitherCaseAndPointAtEachOther) {
  const EngineRow& sglang = engine_row(EngineKind::sglang);
  const EngineRow& vllm = engine_row(EngineKind::vllm);
  ASSERT_TRUE(find_speculative_method(sglang, "eagle3"));
  EXPECT_EQ(find_speculative_method(sglang, "eagle3")->name, "EAGLE3");
  EXPECT_EQ(find_speculative_method(vllm, "EAGLE3")->name, "eagle3");
  EXPECT_FALSE(find_speculative_method(vllm, "NEXTN"));
  EXPECT_FALSE(find_speculative_method(sglang, "medusa"));
  // Each cross-reference names a method the other engine has, and points back.
  for (const auto& [ours, theirs] : {std::pair{&sglang, &vllm}, std::pair{&vllm, &sglang}})
    for (const auto& method : ours->speculative_methods)
      if (!method.elsewhere.empty()) {
        const SpeculativeMethod* other = find_speculative_method(*theirs, method.elsewhere);
        ASSERT_TRUE(other) << method.name;
        EXPECT_EQ(other->elsewhere, method.name);
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

// Every version-gated flag names its source and a release that parses, once per engine.
TEST(Engines, FlagVersionsNameTheirSourceAndFirstRelease) {
  std::set<std::pair<EngineKind, std::string_view>> seen;
  for (const auto& row : flag_versions()) {
    EXPECT_TRUE(seen.insert({row.kind, row.flag}).second) << row.flag;
    EXPECT_FALSE(row.source.empty()) << row.flag;
    EXPECT_TRUE(parse_version(row.since)) << row.flag;
    EXPECT_TRUE(row.flag.starts_with("--")) << row.flag;
  }
}

TEST(Engines, SpellFlagPicksWhatTheReleaseTakes) {
  const auto sglang = EngineKind::sglang;
  const std::string_view decode = "--cuda-graph-max-bs-decode";
  EXPECT_EQ(spell_flag(sglang, decode, "0.5.16").spelling, decode);
  EXPECT_EQ(spell_flag(sglang, decode, "0.6.0.post1").spelling, decode);
  EXPECT_EQ(spell_flag(sglang, decode, "0.5.15").spelling, decode);
  EXPECT_EQ(spell_flag(sglang, decode, "0.5.14").spelling, "--cuda-graph-max-bs");
  const FlagSpelling unknown = spell_flag(sglang, decode, std::nullopt);
  EXPECT_EQ(unknown.spelling, "--cuda-graph-max-bs");
  EXPECT_TRUE(unknown.version_unknown);
  const FlagSpelling too_old = spell_flag(EngineKind::vllm, "--nnodes", "0.11.0");
  EXPECT_EQ(too_old.spelling, "");
  EXPECT_EQ(too_old.needs, "0.11.1");
  // Not in the table: every release takes it.
  EXPECT_EQ(spell_flag(EngineKind::vllm, "--max-num-seqs", "0.8.0").spelling, "--max-num-seqs");
  EXPECT_EQ(spell_flag(EngineKind::vllm, "--shutdown-timeout", "0.17.1").spelling, "");
}

}  // namespace
}  // namespace gl
