// SPDX-License-Identifier: Apache-2.0
#include "lock/lockfile.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "plan/launch_plan.hpp"
#include "profile/toml_parse.hpp"
#include "rules/jit_toolkit.hpp"
#include "unit/render.hpp"
#include "util/json_file.hpp"
#include "util/sha256.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

using Json = nlohmann::ordered_json;

Json optional_text(const std::optional<std::string>& value) {
  return value ? Json(*value) : Json(nullptr);
}

bool is_model_identity_file(const std::string& name) {
  if (name == "config.json" || name == "generation_config.json" || name == "tokenizer.model" ||
      name == "special_tokens_map.json")
    return true;
  if (name.starts_with("tokenizer") && name.ends_with(".json")) return true;
  return name.ends_with(".safetensors.index.json");
}

std::string joined_distinct(const std::vector<std::string>& values) {
  std::vector<std::string> distinct;
  for (const auto& value : values)
    if (std::find(distinct.begin(), distinct.end(), value) == distinct.end())
      distinct.push_back(value);
  std::string text;
  for (const auto& value : distinct) text += (text.empty() ? "" : ", ") + value;
  return text;
}

Json driver_json(const Facts& facts) {
  Json driver = Json::object();
  driver["version"] = facts.driver.present ? optional_text(facts.driver.version) : Json(nullptr);
  driver["cuda"] = facts.driver.present ? optional_text(facts.driver.max_cuda) : Json(nullptr);
  return driver;
}

Json gpu_json(const Facts& facts) {
  std::vector<std::string> models;
  std::vector<std::string> archs;
  for (const auto& gpu : facts.gpus) {
    models.push_back(gpu.name);
    archs.push_back(capability_text(gpu));
  }
  Json gpu = Json::object();
  gpu["model"] = facts.gpus.empty() ? Json(nullptr) : Json(joined_distinct(models));
  gpu["arch"] = facts.gpus.empty() ? Json(nullptr) : Json(joined_distinct(archs));
  gpu["count"] = facts.gpus.size();
  return gpu;
}

Json package(const PythonEnvFact* python, const std::string& name) {
  if (!python) return nullptr;
  auto found = python->packages.find(name);
  return found == python->packages.end() ? Json(nullptr) : Json(found->second);
}

std::optional<std::string> engine_package(EngineKind kind) {
  std::string_view module = engine_row(kind).import_module;
  if (module.empty()) return std::nullopt;
  return std::string(module);
}

}  // namespace

std::string canonical_profile_text(const toml::table& table) {
  std::ostringstream text;
  text << table << "\n";
  return text.str();
}

Json model_identity(const ModelSettings& model, const NodeFs& node,
                    std::vector<std::string>& problems) {
  Json identity = Json::object();
  if (!model.is_local()) {
    identity["id"] = model.path;
    identity["revision"] = optional_text(model.revision);
    if (!model.revision)
      problems.push_back(
          fmt::format("model '{}' is a hub id without 'model.revision': pin a revision to lock it",
                      model.path));
    return identity;
  }
  identity["path"] = model.path;
  std::vector<std::string> names;
  for (const auto& name : node.list(model.path))
    if (is_model_identity_file(name)) names.push_back(name);
  std::sort(names.begin(), names.end());
  Json files = Json::object();
  std::string listing;
  for (const auto& name : names) {
    const std::string path = normal_path(model.path + "/" + name);
    const auto host = node.host_path(path);
    if (!host) {
      problems.push_back(
          fmt::format("'{}' does not resolve within {} links", path, NodeFs::kMaxLinks));
      continue;
    }
    auto hash = sha256_file_hex(*host);
    if (!hash) {
      problems.push_back(hash.error().message);
      continue;
    }
    listing += *hash + "  " + name + "\n";
    files[name] = "sha256:" + *hash;
  }
  if (files.empty()) {
    problems.push_back(fmt::format(
        "Failed to identify model '{}': no config.json, tokenizer or safetensors index in it",
        model.path));
    identity["sha256"] = nullptr;
  } else {
    identity["sha256"] = "sha256:" + sha256_hex(listing);
  }
  identity["files"] = std::move(files);
  return identity;
}

Json node_section(const Profile& profile, const LaunchPlan& plan, const Facts& facts) {
  Json node = Json::object();
  node["driver"] = driver_json(facts);
  node["gpu"] = gpu_json(facts);

  const auto pick = pick_jit_toolkit(plan.environment, facts);
  Json toolkit = Json::object();
  toolkit["path"] = pick.root.empty() ? Json(nullptr) : Json(pick.root);
  toolkit["version"] = pick.toolkit ? optional_text(pick.toolkit->version()) : Json(nullptr);
  node["toolkit"] = std::move(toolkit);

  const PythonEnvFact* python = facts.python ? &*facts.python : nullptr;
  Json stack = Json::object();
  stack["torch"] = python ? optional_text(python->torch_version) : Json(nullptr);
  stack["torch_cuda"] = python ? optional_text(python->torch_cuda) : Json(nullptr);
  stack["flashinfer"] = package(python, "flashinfer");
  stack["triton"] = package(python, "triton");
  const auto engine = engine_package(profile.engine.kind);
  auto version = engine ? package(python, *engine) : Json(nullptr);
  stack["engine"] =
      version.is_null() ? Json(nullptr) : Json(*engine + " " + version.get<std::string>());
  node["python"] = std::move(stack);
  // What the unit opens because this node has it (catalog/sandbox_allowances: gdrdrv, xpmem, an
  // MPS daemon); absent where it has none, as in locks written before.
  Json sandbox = Json::array();
  for (const auto* allowance : plan.sandbox)
    if (allowance->when == AllowanceWhen::node_has_device ||
        allowance->when == AllowanceWhen::mps_daemon)
      sandbox.push_back(std::string(allowance->name));
  if (!sandbox.empty()) node["sandbox"] = std::move(sandbox);
  // engine.image: the image `check` read, by its manifest digest (what a registry serves under
  // the reference can change; the digest cannot) and local id. Absent for a venv engine.
  if (profile.engine.image) {
    Json image = Json::object();
    image["reference"] = *profile.engine.image;
    image["digest"] =
        facts.image && !facts.image->digest.empty() ? Json(facts.image->digest) : Json(nullptr);
    image["id"] = facts.image && !facts.image->id.empty() ? Json(facts.image->id) : Json(nullptr);
    node["image"] = std::move(image);
  }
  return node;
}

Json facts_section(const Facts& facts) {
  Json node = Json::object();
  node["driver"] = driver_json(facts);
  node["gpu"] = gpu_json(facts);
  Json toolkits = Json::object();
  for (const auto& toolkit : facts.toolkits)
    toolkits[toolkit.root] = toolkit.nvcc_exists || toolkit.version()
                                 ? optional_text(toolkit.version())
                                 : Json("(no nvcc)");
  node["toolkits"] = std::move(toolkits);
  Json stack = Json::object();
  if (facts.python) {
    stack["prefix"] = facts.python->prefix;
    stack["torch"] = optional_text(facts.python->torch_version);
    stack["torch_cuda"] = optional_text(facts.python->torch_cuda);
    for (const auto& [name, version] : facts.python->packages)
      if (name != "torch") stack[name] = version;
  }
  node["python"] = std::move(stack);
  return node;
}

std::string unit_text_for_lock(const Profile& profile, const LaunchPlan& plan) {
  RenderOptions options;
  options.gpulaunch_binary = "/usr/bin/gpulaunch";
  auto unit = render_unit(profile, plan, options);
  unit.header.clear();
  return unit.to_text();
}

LockBuild make_lock(const MergedProfile& merged, const Profile& profile, const LaunchPlan& plan,
                    const Facts& facts, const NodeFs& node) {
  LockBuild build;
  Json& lock = build.lock;
  lock["gpulaunch_lock"] = kLockFormat;

  const std::string canonical = canonical_profile_text(merged.table);
  Json profile_json = Json::object();
  profile_json["name"] = profile.name;
  profile_json["file"] = merged.file;
  profile_json["sha256"] = "sha256:" + sha256_hex(canonical);
  profile_json["merged"] = canonical;
  // A secret by its name only: the lock never opens the file, so its value cannot land here.
  if (!profile.secrets.empty()) {
    Json secrets = Json::array();
    for (const auto& [name, file] : profile.secrets) secrets.push_back(name);
    profile_json["secrets"] = std::move(secrets);
  }
  lock["profile"] = std::move(profile_json);

  lock["node"] = node_section(profile, plan, facts);
  lock["model"] = model_identity(profile.model, node, build.problems);

  Json unit = Json::object();
  unit["name"] = profile.unit_name();
  unit["node_rank"] = plan.node_rank;
  unit["sha256"] = "sha256:" + sha256_hex(unit_text_for_lock(profile, plan));
  lock["unit"] = std::move(unit);
  return build;
}

std::string lock_text(const Json& lock) {
  return lock.dump(2) + "\n";
}

Result<void> add_cache_archive(Json& lock, const std::filesystem::path& archive) {
  GL_TRY(auto sha256, sha256_file_hex(archive));
  lock[std::string(kCacheArchiveKey)] = Json{{"sha256", std::move(sha256)}};
  return {};
}

bool is_lock(const Json& document) {
  return document.is_object() && document.contains("gpulaunch_lock");
}

Result<Json> parse_lock(std::string_view text, const std::string& origin) {
  GL_TRY(auto parsed, parse_bounded_json<Json>(text, fmt::format("lock '{}'", origin)));
  Json& document = parsed;
  if (!is_lock(document))
    return failf("Failed to read lock '{}': no \"gpulaunch_lock\" key; not a gpulaunch lockfile",
                 origin);
  if (document["gpulaunch_lock"] != kLockFormat)
    return failf("Failed to read lock '{}': format {} is not the {} this gpulaunch reads", origin,
                 document["gpulaunch_lock"].dump(), kLockFormat);
  for (const char* section : {"profile", "node", "model", "unit"})
    if (!document.contains(section) || !document[section].is_object())
      return failf("Failed to read lock '{}': the \"{}\" section is missing", origin, section);
  // What `verify` reads from the lock itself, before comparing anything.
  const Json& profile = document["profile"];
  if (!profile.contains("name") || !profile["name"].is_string())
    return failf("Failed to read lock '{}': \"profile.name\" is not a string", origin);
  if (profile.contains("file") && !profile["file"].is_string())
    return failf("Failed to read lock '{}': \"profile.file\" is not a string", origin);
  // The merged profile's text, which verify and diff compare key by key: a lock edited by hand
  // is refused here with the line and column inside that text.
  if (profile.contains("merged")) {
    if (!profile["merged"].is_string())
      return failf("Failed to read lock '{}': \"profile.merged\" is not a string", origin);
    GL_TRY_VOID(parse_toml(profile["merged"].get<std::string>(),
                           fmt::format("{} (profile.merged)", origin)));
  }
  if (const Json& unit = document["unit"];
      unit.contains("node_rank") &&
      (!unit["node_rank"].is_number_integer() || unit["node_rank"] < 0 || unit["node_rank"] > 1023))
    return failf("Failed to read lock '{}': \"unit.node_rank\" is not a rank (0 to 1023)", origin);
  if (const auto archive = document.find(std::string(kCacheArchiveKey)); archive != document.end())
    if (!archive->is_object() || !archive->contains("sha256") || !(*archive)["sha256"].is_string())
      return failf("Failed to read lock '{}': \"{}.sha256\" is not a string", origin,
                   kCacheArchiveKey);
  return parsed;
}

Result<Json> load_lock_file(const std::filesystem::path& path) {
  GL_TRY(auto text, read_json_text(path));
  return parse_lock(text, path.string());
}

}  // namespace gl
