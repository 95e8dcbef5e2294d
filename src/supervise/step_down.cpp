// SPDX-License-Identifier: Apache-2.0
#include "supervise/step_down.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <fmt/core.h>

#include "catalog/engine_knobs.hpp"

namespace gl {
namespace {

const EngineRow* stepped_row(EngineKind kind) {
  const EngineRow& row = engine_row(kind);
  return row.steps_down ? &row : nullptr;
}

// Index of the value of `flag` ("--flag V" or "--flag=V"); the last one wins, as in argparse.
std::optional<size_t> find_value(const std::vector<std::string>& argv, std::string_view flag) {
  std::optional<size_t> found;
  if (flag.empty()) return found;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size())
      found = i + 1;
    else if (argv[i].starts_with(flag) && argv[i].size() > flag.size() &&
             argv[i][flag.size()] == '=')
      found = i;
  }
  return found;
}

// The knob's value in argv under either spelling: the later one wins.
struct Found {
  size_t index;
  std::string_view flag;
};
std::optional<Found> find_knob(const std::vector<std::string>& argv, const EngineKnob& knob) {
  auto full = find_value(argv, knob.flag);
  auto short_form = find_value(argv, knob.short_flag);
  if (short_form && (!full || *short_form > *full)) return Found{*short_form, knob.short_flag};
  if (full) return Found{*full, knob.flag};
  return std::nullopt;
}

std::string value_at(const std::vector<std::string>& argv, const Found& found) {
  const auto& word = argv[found.index];
  return word.starts_with(std::string(found.flag) + "=") ? word.substr(found.flag.size() + 1)
                                                         : word;
}

// How the installed release spells a knob the argv lacks (catalog/engines' spell_flag): an
// SGLang before the phase-split graph flags takes only --cuda-graph-max-bs.
struct Spell {
  EngineKind kind;
  const std::optional<std::string>& version;
  std::string operator()(const EngineKnob& knob) const {
    const FlagSpelling fit = spell_flag(kind, knob.flag, version);
    return std::string(fit.spelling.empty() ? knob.flag : fit.spelling);
  }
};

void set_value(std::vector<std::string>& argv, const EngineKnob& knob, const std::string& value,
               const Spell& spell) {
  if (auto found = find_knob(argv, knob)) {
    if (argv[found->index].starts_with(std::string(found->flag) + "="))
      argv[found->index] = std::string(found->flag) + "=" + value;
    else
      argv[found->index] = value;
    return;
  }
  argv.push_back(spell(knob));
  argv.push_back(value);
}

// Where a knob starts: what the argv sets, else the engine's default on these GPUs.
struct Baseline {
  std::string value;
  std::string flag;  // the spelling found in the argv, or the knob's own
  std::string why;
};
std::optional<Baseline> baseline(const std::vector<std::string>& argv, const EngineKnob& knob,
                                 const GpuContext& gpus, const Spell& spell) {
  if (knob.flag.empty()) return std::nullopt;
  if (auto found = find_knob(argv, knob))
    return Baseline{value_at(argv, *found), std::string(found->flag), "engine.args"};
  if (auto fallback = knob_default(knob, gpus))
    return Baseline{fmt::format("{}", fallback->value), spell(knob), fallback->why};
  return std::nullopt;
}

// Halves an integer knob `level` times, not below `floor` (nor above where it was), and says so.
// A knob the engine sizes itself is left alone unless the argv sets it.
void halve(std::vector<std::string>& argv, const EngineKnob& knob, int level, long long floor,
           const GpuContext& gpus, const Spell& spell, std::vector<std::string>& changes) {
  if (level <= 0) return;
  auto start = baseline(argv, knob, gpus, spell);
  if (!start) return;
  const long long current = std::atoll(start->value.c_str());
  const long long next = std::max(std::min(current, floor), current >> std::min(level, 30));
  set_value(argv, knob, std::to_string(next), spell);
  changes.push_back(fmt::format("{} {} -> {} (from {})", start->flag, current, next, start->why));
}

int halvings(const EngineKnob& knob, long long floor, const StepBounds& bounds) {
  if (knob.flag.empty()) return 0;
  if (!knob.engine_default) return bounds.unknown_start_levels;
  int levels = 0;
  for (auto n = static_cast<long long>(knob.default_ceiling); n / 2 >= floor; n /= 2) ++levels;
  return levels;
}

// A share as the engines print theirs: 0.92, 0.907, 0.5.
std::string share(double value) {
  std::string text = fmt::format("{:.3f}", value);
  while (text.ends_with('0')) text.pop_back();
  if (text.ends_with('.')) text.pop_back();
  return text;
}

}  // namespace

int max_gpu_level(EngineKind kind, const StepBounds& bounds) {
  const EngineRow* row = stepped_row(kind);
  if (!row) return 0;
  if (row->mem_fraction.engine_default)
    return static_cast<int>(std::floor(
        (row->mem_fraction.default_ceiling - bounds.fraction_floor) / bounds.fraction_step + 1e-9));
  return halvings(row->context, bounds.context_floor, bounds);
}

int max_host_level(EngineKind kind, const StepBounds& bounds) {
  const EngineRow* row = stepped_row(kind);
  return row ? halvings(row->max_requests, bounds.concurrency_floor, bounds) : 0;
}

SteppedArgv step_down(std::vector<std::string> argv, EngineKind kind, int gpu_level, int host_level,
                      const GpuContext& gpus, const StepBounds& bounds,
                      const std::optional<std::string>& engine_version) {
  SteppedArgv out;
  const Spell spell{kind, engine_version};
  const EngineRow* row = stepped_row(kind);
  if (!row || (gpu_level <= 0 && host_level <= 0)) {
    out.argv = std::move(argv);
    return out;
  }
  const EngineKnob& fraction = row->mem_fraction;
  if (gpu_level > 0 && fraction.engine_default) {
    const Baseline start = *baseline(argv, fraction, gpus, spell);
    const double base = std::strtod(start.value.c_str(), nullptr);
    const double lowered =
        std::max(bounds.fraction_floor, std::min(base, base - bounds.fraction_step * gpu_level));
    const std::string text = share(lowered);
    set_value(argv, fraction, text, spell);
    out.changes.push_back(
        fmt::format("{} {} -> {} (from {})", start.flag, share(base), text, start.why));
    // A smaller static pool leaves less room for CUDA graphs: halve their batch too.
    halve(argv, row->cuda_graph_max_bs, gpu_level, bounds.graph_bs_floor, gpus, spell, out.changes);
  } else if (gpu_level > 0) {
    // No memory share to lower: a shorter context is a smaller KV cache.
    halve(argv, row->context, gpu_level, bounds.context_floor, gpus, spell, out.changes);
  }
  if (host_level > 0)
    halve(argv, row->max_requests, host_level, bounds.concurrency_floor, gpus, spell, out.changes);
  out.argv = std::move(argv);
  return out;
}

std::vector<KnobPolicy> knob_policies(EngineKind kind) {
  const EngineRow& row = engine_row(kind);
  const bool steps = stepped_row(kind) != nullptr;
  const auto step_of = [&](const EngineKnob* knob, bool lowered) {
    if (!steps || !lowered || !knob) return KnobStep::untouched;
    return knob->engine_default ? KnobStep::from_default : KnobStep::where_set;
  };
  // As step_down: a memory share with a default is lowered, and the CUDA graphs' batch with it;
  // without one, the context is halved instead. Concurrency after a host OOM.
  const bool share = row.mem_fraction.engine_default != nullptr;
  std::vector<KnobPolicy> policies;
  for (const EngineKnobKey& knob : engine_knob_keys()) {
    const EngineKnob* stepped = knob.row_knob ? &(row.*knob.row_knob) : nullptr;
    KnobPolicy policy{knob.key, engine_knob_flag(knob, kind), KnobStep::untouched,
                      KnobTrigger::gpu_oom};
    switch (knob.step_down) {
      case KnobStepDown::never:
        break;
      case KnobStepDown::memory_share:
      case KnobStepDown::with_share:
        policy.step = step_of(stepped, share);
        break;
      case KnobStepDown::concurrency:
        policy.step = step_of(stepped, true);
        policy.trigger = KnobTrigger::host_oom;
        break;
    }
    policies.push_back(policy);
  }
  policies.push_back(
      {"context", row.context.flag, step_of(&row.context, !share), KnobTrigger::gpu_oom});
  std::erase_if(policies, [](const KnobPolicy& policy) { return policy.flag.empty(); });
  return policies;
}

}  // namespace gl
