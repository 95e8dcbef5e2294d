// SPDX-License-Identifier: Apache-2.0
#include "rules/init_proposal.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/core.h>

#include "facts/python_env.hpp"
#include "plan/gpu_assignment.hpp"
#include "rules/model_fit.hpp"
#include "util/try.hpp"
#include "util/version.hpp"

namespace gl {
namespace {

std::string weights_text(const ModelFact& model) {
  if (!model.weights_bytes) return "weights not measured";
  return fmt::format("{} of weights, {}", fit_gb(static_cast<double>(*model.weights_bytes)),
                     model.weights_source);
}

std::string fit_text(const FitArithmetic& fit, long long tp) {
  return fmt::format(
      "tp = {}: needs {} ({} weights + {} KV cache of one {}-token request), {} x "
      "{} MiB x {} gives {}",
      tp, fit_gb(fit.need), fit_gb(fit.weights), fit_gb(fit.kv),
      fit.per_token > 0 ? fmt::format("{}", static_cast<long long>(fit.kv / fit.per_token))
                        : std::string("?"),
      fit.copy_gpus, fit.smallest->memory_total_mib, fit.fraction, fit_gb(fit.usable));
}

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\u{:04X}", byte);
    else
      out += c;
  }
  return out + "\"";
}

// A comment line: one line whatever the text holds.
std::string comment(std::string_view text) {
  std::string line = "# ";
  for (char c : text) line += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  return line + "\n";
}

size_t ask(Chooser& chooser, const Choice& choice) {
  if (choice.options.size() <= 1) return 0;
  const size_t taken = chooser.choose(choice);
  return taken < choice.options.size() ? taken : choice.proposed;
}

std::string picked_why(const Choice& choice, size_t taken) {
  if (choice.options.size() <= 1) return choice.rule;
  if (taken == choice.proposed)
    return fmt::format("proposed of {} found ({})", choice.options.size(), choice.rule);
  return fmt::format("chosen of {} found (the proposal was {}: {})", choice.options.size(),
                     choice.options[choice.proposed], choice.rule);
}

}  // namespace

Result<Choice> venv_choice(const InitRequest& request, const Discovery& discovery,
                           std::vector<EngineOption>& answers) {
  answers.clear();
  for (size_t i = 0; i < discovery.venvs.size(); ++i)
    for (const auto& [kind, version] : discovery.venvs[i].engines)
      if (!request.engine || *request.engine == kind) answers.push_back({i, kind, version});
  if (answers.empty()) {
    const std::string what =
        request.engine ? fmt::format("{}", engine_row(*request.engine).display)
                       : std::string("an engine (") +
                             engine_kinds_where(
                                 [](const EngineRow& row) { return !row.pip_dist.empty(); }, "or") +
                             ")";
    if (request.venv)
      return failf("init: the venv '{}' holds no {}: name the venv that has it (--venv DIR)",
                   *request.venv, what);
    return failf("init: found no venv holding {}: name it with --venv DIR", what);
  }
  // Within an engine, its newest release first, then by path: the order is the proposal. Two
  // engines' version numbers say nothing about each other, so engines are never ordered by them:
  // which engine fits is the node's to say (init --yes keeps the first whose profile passes check
  // and asks for --engine when two engines' do).
  std::stable_sort(answers.begin(), answers.end(), [&](const auto& a, const auto& b) {
    if (a.engine != b.engine) return a.engine < b.engine;
    const auto va = parse_version(a.version), vb = parse_version(b.version);
    if (va != vb) return va > vb;
    return discovery.venvs[a.venv].prefix < discovery.venvs[b.venv].prefix;
  });
  Choice choice{"venv", {}, 0, kVenvRule};
  for (const auto& answer : answers) {
    const auto& venv = discovery.venvs[answer.venv];
    choice.options.push_back(
        fmt::format("{} ({} {}, torch {}{})", venv.prefix, engine_kind_name(answer.engine),
                    answer.version, venv.python.torch_version.value_or("none"),
                    venv.python.torch_cuda ? ", CUDA " + *venv.python.torch_cuda : std::string()));
  }
  return choice;
}

Result<Choice> model_choice(const InitRequest& request, const Discovery& discovery,
                            std::vector<size_t>& answers) {
  answers.resize(discovery.models.size());
  std::iota(answers.begin(), answers.end(), size_t{0});
  if (answers.empty()) {
    if (request.model && !request.model->starts_with('/')) return Choice{"model", {}, 0, ""};
    if (request.model)
      return failf("init: the model '{}' is neither a directory with config.json nor a file",
                   *request.model);
    return failf(
        "init: found no model (a directory with config.json, a GGUF file, the hub cache's): name "
        "it with --model PATH|HUB_ID");
  }
  std::stable_sort(answers.begin(), answers.end(), [&](size_t a, size_t b) {
    const auto& ma = discovery.models[a];
    const auto& mb = discovery.models[b];
    if (ma.hub != mb.hub) return !ma.hub;
    return ma.path < mb.path;
  });
  Choice choice{"model",
                {},
                0,
                "local directories and GGUF files before the hub cache's models, each by path"};
  for (size_t index : answers) {
    const auto& model = discovery.models[index];
    choice.options.push_back(
        fmt::format("{} ({}; found in {})", model.path, weights_text(model.fact), model.found_via));
  }
  return choice;
}

Result<Choice> parallelism_choice(EngineKind engine, const ModelFact& model,
                                  const std::vector<const GpuFact*>& gpus,
                                  std::vector<long long>& answers) {
  answers.clear();
  const EngineRow& row = engine_row(engine);
  if (gpus.empty()) {
    answers.push_back(1);
    return Choice{"parallelism", {"tp = 1"}, 0, "no GPU was seen: tp = 1, not judged"};
  }
  std::optional<FitArithmetic> last;
  std::string tried;
  for (long long tp = 1; tp <= static_cast<long long>(gpus.size()); tp *= 2) {
    const std::vector<const GpuFact*> share(gpus.begin(), gpus.begin() + tp);
    auto fit = fit_arithmetic({engine, tp, 1, 1, 1, std::nullopt, share, model.context}, model);
    if (!fit) {
      answers.assign(1, 1);
      const std::string why =
          !model.weights_bytes
              ? std::string("the model's weights were not measured")
              : fmt::format("{}'s memory share is not the fit rule's", row.display);
      return Choice{"parallelism", {"tp = 1"}, 0, fmt::format("tp = 1: not judged ({})", why)};
    }
    if (fit->fits())
      answers.push_back(tp);
    else if (answers.empty())
      tried += (tried.empty() ? "" : "; ") + fit_text(*fit, tp);
    last = fit;
  }
  if (answers.empty())
    return failf(
        "init: the model does not fit {} GPU(s) of {} MiB with {}: {}. Use a node with more GPU "
        "memory (about {} such GPUs), a lower-precision checkpoint (FP8, INT4), or a shorter "
        "context",
        gpus.size(), last->smallest->memory_total_mib, row.display, tried, last->gpus_needed());
  Choice choice{"parallelism",
                {},
                0,
                fmt::format("the smallest tensor-parallel size the fit rule says fits{}",
                            tried.empty() ? std::string() : " (" + tried + ")")};
  for (long long tp : answers) choice.options.push_back(fmt::format("tp = {}", tp));
  return choice;
}

Choice toolkit_choice(const std::optional<std::string>& torch_cuda,
                      const std::vector<ToolkitFact>& toolkits,
                      std::vector<std::optional<std::string>>& answers) {
  answers.clear();
  Choice choice{"toolkit", {}, 0, ""};
  const auto wanted = torch_cuda ? parse_version(*torch_cuda) : std::nullopt;
  if (!wanted) {
    choice.rule = "torch has no CUDA build: no toolkit pinned";
    return choice;
  }
  std::vector<const ToolkitFact*> matching;
  for (const auto& toolkit : toolkits) {
    const auto version = toolkit.version();
    const auto parsed = version ? parse_version(*version) : std::nullopt;
    if (!toolkit.nvcc_exists || !parsed || parsed->major_minor() != wanted->major_minor() ||
        !toolkit.not_toolkit_root_reason().empty())
      continue;
    matching.push_back(&toolkit);
  }
  std::stable_sort(matching.begin(), matching.end(), [](const auto* a, const auto* b) {
    const bool link_a = a->resolved_root != a->root, link_b = b->resolved_root != b->root;
    if (link_a != link_b) return !link_a;
    return a->root < b->root;
  });
  if (matching.empty()) {
    choice.rule = fmt::format(
        "no toolkit on this node has nvcc {0} (torch's CUDA): install CUDA {0}'s nvcc "
        "(cuda-nvcc-{1}-{2}) and set toolkit.cuda_home to its root",
        wanted->major_minor(), wanted->major, wanted->minor);
    return choice;
  }
  choice.rule = fmt::format(
      "nvcc {} is torch's CUDA; a root that is no link before one that is, then by path",
      wanted->major_minor());
  for (const auto* toolkit : matching) {
    answers.emplace_back(toolkit->root);
    choice.options.push_back(
        fmt::format("{} (nvcc {}, {})", toolkit->root, toolkit->version().value_or("?"),
                    toolkit->nvcc_version_source.empty()
                        ? (toolkit->found_via.empty() ? std::string("found")
                                                      : "found via " + toolkit->found_via.front())
                        : toolkit->nvcc_version_source));
  }
  return choice;
}

namespace {

// The image as the one engine place: its Python (facts.python, read from the mounted image) and
// the engines installed there. An image podman could not read, or without an engine, is refused.
Result<void> image_candidate(const InitRequest& request, const Facts& facts, Discovery& scoped) {
  const std::string& reference = *request.image;
  if (!facts.image || !facts.image->problems.empty() || !facts.python) {
    std::string why = "podman did not read it";
    if (facts.image && !facts.image->problems.empty()) why = facts.image->problems.front();
    return failf("init --image '{}': {} (`podman pull {}` as root first)", reference, why,
                 reference);
  }
  VenvCandidate candidate{reference, "--image", *facts.python, {}};
  for (const auto& row : engine_rows())
    if (auto version = installed_engine_version(candidate.python, row.kind))
      candidate.engines.emplace_back(row.kind, *version);
  if (candidate.engines.empty() ||
      (request.engine && std::ranges::none_of(candidate.engines, [&](const auto& engine) {
         return engine.first == *request.engine;
       })))
    return failf(
        "init --image '{}': the image holds no {} package", reference,
        request.engine ? std::string(engine_kind_name(*request.engine)) : std::string("engine"));
  scoped.venvs.push_back(std::move(candidate));
  return {};
}

}  // namespace

Result<InitDecision> decide_init(const InitRequest& request, const Facts& facts,
                                 const Discovery& discovery, Chooser& chooser) {
  InitDecision decision;
  decision.name = request.name;

  // --image: the image is the one place its engine can come from, read as a venv is.
  Discovery scoped;
  if (request.image) {
    GL_TRY_VOID(image_candidate(request, facts, scoped));
  }
  const Discovery& engine_places = request.image ? scoped : discovery;
  std::vector<EngineOption> engines;
  GL_TRY(const Choice venvs, venv_choice(request, engine_places, engines));
  const size_t venv_taken = ask(chooser, venvs);
  const EngineOption& engine = engines[venv_taken];
  const VenvCandidate& venv = engine_places.venvs[engine.venv];
  decision.engine = engine.engine;
  decision.engine_version = engine.version;
  if (request.image)
    decision.image = *request.image;
  else
    decision.venv = venv.prefix;
  decision.venv_why = picked_why(venvs, venv_taken);
  decision.torch = venv.python.torch_version;
  decision.torch_cuda = venv.python.torch_cuda;

  std::vector<size_t> models;
  GL_TRY(const Choice model_options, model_choice(request, discovery, models));
  ModelFact model_fact;
  if (models.empty()) {  // a hub id no cache here holds
    decision.model = *request.model;
    decision.model_why = "as told; not in a hub cache here, so not measured";
  } else {
    const size_t taken = ask(chooser, model_options);
    const ModelCandidate& model = discovery.models[models[taken]];
    decision.model = model.path;
    decision.model_why =
        fmt::format("{}; {}", weights_text(model.fact), picked_why(model_options, taken));
    model_fact = model.fact;
  }

  std::vector<const GpuFact*> gpus;
  if (request.gpus.empty()) {
    for (const auto& gpu : facts.gpus) gpus.push_back(&gpu);
  } else {
    for (const auto& device : request.gpus) {
      auto found = std::ranges::find_if(facts.gpus,
                                        [&](const GpuFact& gpu) { return names_gpu(device, gpu); });
      if (found == facts.gpus.end())
        return failf("init: --gpus names '{}', which this node does not have ({} GPU(s) seen)",
                     device, facts.gpus.size());
      gpus.push_back(&*found);
    }
    decision.devices = request.gpus;
  }
  std::vector<long long> sizes;
  GL_TRY(const Choice parallelism, parallelism_choice(decision.engine, model_fact, gpus, sizes));
  const size_t tp_taken = ask(chooser, parallelism);
  decision.tp = sizes[tp_taken];
  decision.parallelism_why = picked_why(parallelism, tp_taken);
  // Told GPUs are all the engine's: as many as tp uses.
  if (!decision.devices.empty()) decision.devices.resize(static_cast<size_t>(decision.tp));

  std::vector<std::optional<std::string>> roots;
  const Choice toolkits = toolkit_choice(decision.torch_cuda, facts.toolkits, roots);
  if (request.image) {
    decision.toolkit_why = fmt::format(
        "none pinned: the engine compiles with the image's own CUDA{} (the host's toolkits are "
        "not in the container)",
        facts.image && facts.image->cuda_version ? " " + *facts.image->cuda_version : "");
  } else if (roots.empty()) {
    decision.toolkit_why = toolkits.rule;
  } else {
    const size_t taken = ask(chooser, toolkits);
    decision.cuda_home = roots[taken];
    decision.toolkit_why = picked_why(toolkits, taken);
  }
  return decision;
}

std::string init_profile_text(const InitDecision& decision) {
  const EngineRow& row = engine_row(decision.engine);
  std::string text;
  text +=
      comment(fmt::format("Profile '{}', written by `gpulaunch init` from what it found on "
                          "this node; each value says why.",
                          decision.name));
  text +=
      comment(fmt::format("Judge it again with `gpulaunch check {}`; the keys are in "
                          "gpulaunch.toml(5).",
                          decision.name));
  text += fmt::format("description = {}\n", toml_quoted(fmt::format("{} {}, tp {}", row.display,
                                                                    decision.model, decision.tp)));
  text += "\n[engine]\n";
  const bool image = !decision.image.empty();
  text +=
      comment(fmt::format("{} {} in this {}, torch {}{}: {}", row.display, decision.engine_version,
                          image ? "image" : "venv", decision.torch.value_or("none"),
                          decision.torch_cuda ? " for CUDA " + *decision.torch_cuda : std::string(),
                          decision.venv_why));
  text += fmt::format("kind = {}\n", toml_quoted(engine_kind_name(decision.engine)));
  if (image)
    text += fmt::format("image = {}\n", toml_quoted(decision.image));
  else
    text += fmt::format("venv = {}\n", toml_quoted(decision.venv));
  text += "\n[model]\n";
  text += comment(decision.model_why);
  text += fmt::format("path = {}\n", toml_quoted(decision.model));
  text += "\n[parallelism]\n";
  text += comment(decision.parallelism_why);
  text += fmt::format("tp = {}\n", decision.tp);
  text += "\n[toolkit]\n";
  text += comment(decision.toolkit_why);
  if (decision.cuda_home) text += fmt::format("cuda_home = {}\n", toml_quoted(*decision.cuda_home));
  if (!decision.devices.empty()) {
    text += "\n[gpus]\n";
    text += comment("as told (--gpus)");
    std::string list;
    for (const auto& device : decision.devices)
      list += (list.empty() ? "" : ", ") + toml_quoted(device);
    text += fmt::format("devices = [{}]\n", list);
  }
  return text;
}

}  // namespace gl
