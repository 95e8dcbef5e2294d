// SPDX-License-Identifier: Apache-2.0
// Lockfiles: what they record, that they are byte-for-byte deterministic, and that drift in each
// recorded field comes back as one row naming the field, both values and why it matters.

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lock/drift.hpp"
#include "lock/lockfile.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "temp_dir.hpp"
#include "util/sha256.hpp"

namespace gl {
namespace {

using Json = nlohmann::ordered_json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kProfile = R"(description = "lock test"

[engine]
kind = "sglang"
venv = "/opt/venv"

[model]
path = "/models/m"

[parallelism]
tp = 2

[toolkit]
cuda_home = "/usr/local/cuda-13.0"

[server]
port = 30000
)";

ToolkitFact toolkit_at(const std::string& root, const std::string& nvcc,
                       const std::string& version) {
  ToolkitFact toolkit;
  toolkit.root = root;
  toolkit.nvcc = nvcc;
  toolkit.resolved_root = root;
  toolkit.root_exists = true;
  toolkit.nvcc_exists = true;
  toolkit.nvcc_version = version;
  return toolkit;
}

Facts node_facts() {
  Facts facts;
  facts.driver.present = true;
  facts.driver.source = "nvml";
  facts.driver.version = "580.95.05";
  facts.driver.max_cuda = "13.0";
  for (int i = 0; i < 2; ++i)
    facts.gpus.push_back(GpuFact{i, "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                                 "GPU-" + std::to_string(i), 12, 0, 97887});
  facts.toolkits.push_back(
      toolkit_at("/usr/local/cuda-13.0", "/usr/local/cuda-13.0/bin/nvcc", "13.0"));
  PythonEnvFact python;
  python.prefix = "/opt/venv";
  python.interpreter = "/opt/venv/bin/python";
  python.interpreter_exists = true;
  python.torch_version = "2.9.0+cu130";
  python.torch_cuda = "13.0";
  python.packages = {
      {"torch", "2.9.0+cu130"}, {"flashinfer", "0.6.7"}, {"triton", "3.5.0"}, {"sglang", "0.5.5"}};
  facts.python = python;
  return facts;
}

class LockTest : public ::testing::Test {
 protected:
  LockTest() {
    node_.write("models/m/config.json", "{\"architectures\": [\"KimiK2\"]}\n");
    node_.write("models/m/tokenizer.json", "{\"model\": {}}\n");
    node_.write("models/m/tokenizer_config.json", "{}\n");
    node_.write("models/m/model.safetensors.index.json", "{\"weight_map\": {}}\n");
    node_.write("models/m/model-00001-of-00002.safetensors", "weights");
    node_.write("models/m/README.md", "# m\n");
  }

  Json lock(const std::string& profile_text = kProfile, const Facts& facts = node_facts(),
            long long node_rank = 0) {
    auto build = build_lock(profile_text, facts, node_rank);
    EXPECT_THAT(build.problems, ElementsAre());
    return build.lock;
  }

  LockBuild build_lock(const std::string& profile_text, const Facts& facts, long long node_rank) {
    MemorySource source({{"/p/lk.toml", profile_text}});
    auto merged = load_merged(source, "lk");
    EXPECT_TRUE(merged) << merged.error().message;
    auto profile = validate_profile(*merged);
    EXPECT_TRUE(profile) << profile.error().message;
    return make_lock(*merged, *profile, make_launch_plan(*profile, LaunchOptions{node_rank}), facts,
                     NodeFs(node_.path()));
  }

  // The drift table's rows, header dropped.
  static std::vector<std::string> drift_rows(const Json& locked, const Json& live) {
    std::vector<std::string> rows;
    std::istringstream lines(drift_table(drift(locked, live)));
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line.substr(0, 5), "FIELD");
    while (std::getline(lines, line)) rows.push_back(line);
    return rows;
  }

  std::optional<std::string> read_text(const std::string& name) const {
    std::ifstream in(node_.path() / "models/m" / name, std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  testing::TempDir node_;
};

// A secret is recorded by its name: the lock never opens the file, so its value (here in a
// readable file the test made) is nowhere in the lock, and the unit hash covers only the file's
// path.
TEST_F(LockTest, RecordsASecretsNameNeverItsValue) {
  const std::string value = "hf_LockMustNeverHoldThisValue";
  const auto file = node_.write("secrets/hf_token", value);
  const Json locked =
      lock(std::string(kProfile) + "\n[secrets]\nHF_TOKEN = \"" + file.string() + "\"\n");
  EXPECT_EQ(locked["profile"]["secrets"], Json::array({"HF_TOKEN"}));
  const std::string text = lock_text(locked);
  EXPECT_EQ(text.find(value), std::string::npos);
  EXPECT_NE(text.find(file.string()), std::string::npos);  // the merged profile names the file
  // Without secrets the profile section is as before.
  EXPECT_FALSE(lock()["profile"].contains("secrets"));
}

TEST_F(LockTest, RecordsTheDecidingFactsInAFixedOrder) {
  const Json locked = lock();
  std::vector<std::string> top;
  for (const auto& [key, value] : locked.items()) top.push_back(key);
  EXPECT_THAT(top, ElementsAre("gpulaunch_lock", "profile", "node", "model", "unit"));
  EXPECT_EQ(
      locked["node"].dump(),
      R"({"driver":{"version":"580.95.05","cuda":"13.0"},)"
      R"("gpu":{"model":"NVIDIA RTX PRO 6000 Blackwell Server Edition","arch":"12.0","count":2},)"
      R"("toolkit":{"path":"/usr/local/cuda-13.0","version":"13.0"},)"
      R"("python":{"torch":"2.9.0+cu130","torch_cuda":"13.0","flashinfer":"0.6.7",)"
      R"("triton":"3.5.0","engine":"sglang 0.5.5"}})");
  EXPECT_EQ(locked["unit"]["name"], "gpulaunch-lk.service");
  EXPECT_EQ(locked["unit"]["node_rank"], 0);
  EXPECT_THAT(locked["unit"]["sha256"].get<std::string>(), ::testing::StartsWith("sha256:"));
}

TEST_F(LockTest, TextIsDeterministicIndentedAndEndsWithANewline) {
  const std::string first = lock_text(lock());
  const std::string second = lock_text(lock());
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.back(), '\n');
  EXPECT_EQ(first.substr(0, 25), "{\n  \"gpulaunch_lock\": 1,\n");
  auto parsed = parse_lock(first, "lock.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(lock_text(*parsed), first);
}

TEST_F(LockTest, ProfileHashIsTheHashOfTheMergedCanonicalText) {
  const Json locked = lock();
  const std::string merged = locked["profile"]["merged"];
  EXPECT_THAT(merged, HasSubstr("cuda_home = '/usr/local/cuda-13.0'"));
  EXPECT_EQ(locked["profile"]["sha256"], "sha256:" + sha256_hex(merged));
  // Comments and layout are not the profile: the same values hash the same.
  const Json reformatted = lock(std::string("# a comment\n") + kProfile + "\n\n");
  EXPECT_EQ(reformatted["profile"]["sha256"], locked["profile"]["sha256"]);
}

TEST_F(LockTest, ModelIdentityHashesConfigTokenizerAndIndexButNeverWeights) {
  const Json model = lock()["model"];
  std::vector<std::string> files;
  for (const auto& [name, hash] : model["files"].items()) files.push_back(name);
  EXPECT_THAT(files, ElementsAre("config.json", "model.safetensors.index.json", "tokenizer.json",
                                 "tokenizer_config.json"));
  // sha256sum's "HASH  NAME" lines, sorted by name, hashed.
  std::string listing;
  for (const auto& name : files) listing += sha256_hex(*read_text(name)) + "  " + name + "\n";
  EXPECT_EQ(model["sha256"], "sha256:" + sha256_hex(listing));
  EXPECT_EQ(model["files"]["config.json"],
            "sha256:" + sha256_hex("{\"architectures\": [\"KimiK2\"]}\n"));

  node_.write("models/m/model-00001-of-00002.safetensors", "other weights");
  EXPECT_EQ(lock()["model"]["sha256"], model["sha256"]);
}

TEST_F(LockTest, HubModelIsItsIdAndPinnedRevision) {
  std::string text = kProfile;
  text.replace(text.find("path = \"/models/m\""), 18,
               "path = \"org/model\"\nrevision = \"3f2c1a\"");
  EXPECT_EQ(lock(text)["model"].dump(), R"({"id":"org/model","revision":"3f2c1a"})");
}

TEST_F(LockTest, UnpinnedHubModelOrMissingModelCannotBeLocked) {
  std::string hub = kProfile;
  hub.replace(hub.find("path = \"/models/m\""), 18, "path = \"org/model\"");
  EXPECT_THAT(build_lock(hub, node_facts(), 0).problems,
              ElementsAre("model 'org/model' is a hub id without 'model.revision': pin a "
                          "revision to lock it"));
  std::filesystem::remove_all(node_.path() / "models");
  EXPECT_THAT(build_lock(kProfile, node_facts(), 0).problems,
              ElementsAre("Failed to identify model '/models/m': no config.json, tokenizer or "
                          "safetensors index in it"));
}

TEST_F(LockTest, NoDriftAgainstItself) {
  EXPECT_THAT(drift(lock(), lock()), ElementsAre());
}

// One test per recorded field: the row a user reads.

TEST_F(LockTest, DriftInProfile) {
  std::string changed = kProfile;
  changed.replace(changed.find("tp = 2"), 6, "tp = 1");
  EXPECT_THAT(drift_rows(lock(), lock(changed))[0],
              ::testing::MatchesRegex("profile.sha256  sha256:[0-9a-f]{64}  sha256:[0-9a-f]{64}  "
                                      "the merged profile changed: engine flags, parallelism, "
                                      "environment or limits differ"));
}

TEST_F(LockTest, DriftInDriverVersion) {
  Facts live = node_facts();
  live.driver.version = "575.57.08";
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.driver.version  580.95.05  575.57.08  the driver loads every "
                          "kernel: another one may refuse the CUDA that torch and the toolkit "
                          "were built for"));
}

TEST_F(LockTest, DriftInDriverCuda) {
  Facts live = node_facts();
  live.driver.max_cuda = "12.9";
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.driver.cuda  13.0    12.9  the newest CUDA the driver runs: "
                          "kernels built for a newer CUDA fail to load"));
}

TEST_F(LockTest, DriftInGpuModel) {
  Facts live = node_facts();
  for (auto& gpu : live.gpus) gpu.name = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition";
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.gpu.model  NVIDIA RTX PRO 6000 Blackwell Server Edition  NVIDIA "
                          "RTX PRO 6000 Blackwell Workstation Edition  memory fraction, batch "
                          "sizes and kernel choices were sized and tested on this GPU"));
}

TEST_F(LockTest, DriftInGpuArchitecture) {
  Facts live = node_facts();
  for (auto& gpu : live.gpus) gpu.cc_major = 10;
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.gpu.arch  12.0    10.0  kernels are compiled per architecture: "
                          "JIT caches rebuild, prebuilt kernels may be missing"));
}

TEST_F(LockTest, DriftInGpuCount) {
  Facts live = node_facts();
  live.gpus.pop_back();
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.gpu.count  2       1     the profile's parallelism needs this "
                          "many GPUs"));
}

TEST_F(LockTest, DriftInToolkitPath) {
  // No toolkit pinned: JIT libraries take /usr/local/cuda, then `which nvcc` once one is on PATH.
  std::string unpinned = kProfile;
  unpinned.erase(unpinned.find("[toolkit]"),
                 std::string("[toolkit]\ncuda_home = \"/usr/local/cuda-13.0\"\n\n").size());
  Facts locked = node_facts();
  locked.toolkits = {toolkit_at("/usr/local/cuda", "/usr/local/cuda/bin/nvcc", "13.0")};
  Facts live = node_facts();
  live.toolkits = {toolkit_at("/usr", "/usr/bin/nvcc", "13.0")};
  EXPECT_THAT(drift_rows(lock(unpinned, locked), lock(unpinned, live)),
              ElementsAre("node.toolkit.path  /usr/local/cuda  /usr  CUDA_HOME and PATH point "
                          "JIT compilers (FlashInfer, DeepGEMM, Triton) at another nvcc"));
}

TEST_F(LockTest, DriftInToolkitVersion) {
  Facts live = node_facts();
  live.toolkits[0].nvcc_version = "12.9";
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.toolkit.version  13.0    12.9  JIT kernels compile with this "
                          "nvcc: FlashInfer gates GPU architectures on its version and the JIT "
                          "caches are keyed to it"));
}

TEST_F(LockTest, DriftInTorch) {
  Facts live = node_facts();
  live.python->torch_version = "2.8.0+cu130";
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.python.torch  2.9.0+cu130  2.8.0+cu130  the engine's kernels "
                          "and extensions are built against this torch"));
}

TEST_F(LockTest, DriftInTorchCuda) {
  Facts live = node_facts();
  live.python->torch_cuda = "12.8";
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.python.torch_cuda  13.0    12.8  the CUDA torch was built for: "
                          "it must match the driver and the JIT toolkit"));
}

TEST_F(LockTest, DriftInFlashInfer) {
  Facts live = node_facts();
  live.python->packages["flashinfer"] = "0.6.6";
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.python.flashinfer  0.6.7   0.6.6  attention and sampling "
                          "kernels; its JIT gates depend on nvcc and the architecture"));
}

TEST_F(LockTest, DriftInTriton) {
  Facts live = node_facts();
  live.python->packages.erase("triton");
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.python.triton  3.5.0   (none)  Triton kernels compile at run "
                          "time with this version"));
}

TEST_F(LockTest, DriftInEngine) {
  Facts live = node_facts();
  live.python->packages["sglang"] = "0.5.6";
  EXPECT_THAT(drift_rows(lock(), lock(kProfile, live)),
              ElementsAre("node.python.engine  sglang 0.5.5  sglang 0.5.6  the engine itself: "
                          "flags, defaults and kernels differ between versions"));
}

// engine.image: the lock pins the image's manifest digest; the same reference re-tagged to
// another build is drift, named with why it matters.
TEST_F(LockTest, DriftInImageDigest) {
  std::string profile = kProfile;
  profile.replace(profile.find("venv = \"/opt/venv\""), std::string("venv = \"/opt/venv\"").size(),
                  "image = \"localhost/sglang:v0.5.5\"");
  profile.erase(profile.find("[toolkit]"),
                std::string("[toolkit]\ncuda_home = \"/usr/local/cuda-13.0\"\n\n").size());
  Facts locked_facts = node_facts();
  locked_facts.image = ImageFact{};
  locked_facts.image->reference = "localhost/sglang:v0.5.5";
  locked_facts.image->id = "1f2e";
  locked_facts.image->digest = "sha256:aaaa";
  const Json locked = lock(profile, locked_facts);
  EXPECT_EQ(locked["node"]["image"]["digest"], "sha256:aaaa");
  Facts live = locked_facts;
  live.image->digest = "sha256:bbbb";
  EXPECT_THAT(drift_rows(locked, lock(profile, live)),
              ElementsAre("node.image.digest  sha256:aaaa  sha256:bbbb  another image under the "
                          "same reference: its engine, torch, CUDA and kernels may all differ, and "
                          "the JIT caches were built by the locked one"));
}

TEST_F(LockTest, DriftInModelNamesTheFileThatChanged) {
  const Json locked = lock();
  node_.write("models/m/tokenizer.json", "{\"model\": {\"vocab\": 1}}\n");
  auto rows = drift_rows(locked, lock());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(rows[0], ::testing::MatchesRegex(
                           "model.sha256                sha256:[0-9a-f]{64}  sha256:[0-9a-f]{64}  "
                           "another model: its config, tokenizer or weight index changed, "
                           "answers differ"));
  EXPECT_THAT(rows[1], ::testing::MatchesRegex("model.files.tokenizer.json  sha256:[0-9a-f]{64}  "
                                               "sha256:[0-9a-f]{64}  this file of the model "
                                               "changed"));
}

TEST_F(LockTest, DriftInHubRevision) {
  std::string text = kProfile;
  text.replace(text.find("path = \"/models/m\""), 18, "path = \"org/model\"\nrevision = \"aaa\"");
  std::string moved = text;
  moved.replace(moved.find("\"aaa\""), 5, "\"bbb\"");
  auto rows = drift_rows(lock(text), lock(moved));
  // The revision is in the profile and on the engine's command line: those change with it.
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_THAT(rows[0], ::testing::StartsWith("profile.sha256 "));
  EXPECT_EQ(rows[1], "model.revision  aaa" + std::string(70, ' ') + "bbb" + std::string(70, ' ') +
                         "another revision of the model: other weights or tokenizer");
  EXPECT_THAT(rows[2], ::testing::StartsWith("unit.sha256 "));
}

TEST_F(LockTest, DriftInUnit) {
  // A lock from a gpulaunch that rendered the unit differently.
  Json locked = lock();
  const std::string live_hash = locked["unit"]["sha256"];
  locked["unit"]["sha256"] = "sha256:" + std::string(64, '0');
  EXPECT_THAT(drift_rows(locked, lock()),
              ElementsAre("unit.sha256  sha256:" + std::string(64, '0') + "  " + live_hash +
                          "  systemd would run a different unit: argv, environment or limits "
                          "differ"));
}

TEST_F(LockTest, UnitHashIsPerRank) {
  std::string two_nodes = kProfile;
  two_nodes.replace(two_nodes.find("tp = 2"), 6,
                    "tp = 4\nnodes = 2\ndist_init_addr = \"10.0.0.1:5000\"");
  auto rows = drift(lock(two_nodes, node_facts(), 0), lock(two_nodes, node_facts(), 1));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "unit.node_rank");
  EXPECT_EQ(rows[1].key, "unit.sha256");
}

TEST_F(LockTest, FactsOfTwoNodesSideBySide) {
  Facts other = node_facts();
  other.toolkits.push_back(toolkit_at("/usr", "/usr/bin/nvcc", "12.8"));
  Json a = Json::object();
  a["node"] = facts_section(node_facts());
  Json b = Json::object();
  b["node"] = facts_section(other);
  auto rows = field_rows(a, b);
  auto differing = std::count_if(rows.begin(), rows.end(), [](auto& row) { return row.differs(); });
  EXPECT_EQ(differing, 1);
  auto text = side_by_side_table(rows, "a.json", "b.json");
  EXPECT_THAT(text, HasSubstr("\n  node.toolkits./usr/local/cuda-13.0  13.0  "));
  EXPECT_THAT(text, ::testing::MatchesRegex("(.|\n)*\n! node.toolkits./usr +\\(none\\) +12.8 +JIT "
                                            "compilers find this toolkit through CUDA_HOME, PATH "
                                            "or /usr/local/cuda\n"));
}

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  testing::TempDir dir;
  EXPECT_EQ(*sha256_file_hex(dir.write("f", "abc")), sha256_hex("abc"));
  EXPECT_THAT(sha256_file_hex(dir.path() / "missing").error().message,
              ::testing::StartsWith("Failed to hash '"));
}

TEST(LockFile, RejectsWhatIsNotALock) {
  EXPECT_EQ(parse_lock("{\"root\": \"/\"}", "facts.json").error().message,
            "Failed to read lock 'facts.json': no \"gpulaunch_lock\" key; not a gpulaunch "
            "lockfile");
  EXPECT_EQ(parse_lock("{", "x.json").error().message,
            "Failed to read lock 'x.json': not valid JSON");
  EXPECT_EQ(parse_lock("{\"gpulaunch_lock\": 2}", "new.json").error().message,
            "Failed to read lock 'new.json': format 2 is not the 1 this gpulaunch reads");
}

// `verify` reads the profile's name and file and the unit's rank from a lock someone handed over:
// each must have the type it reads, or the lock is refused (never an exception at exit 70).
TEST_F(LockTest, WrongTypedFieldsVerifyReadsAreRefused) {
  auto refused = [&](const std::string& pointer, const Json& value) {
    Json locked = lock();
    locked[Json::json_pointer(pointer)] = value;
    auto parsed = parse_lock(locked.dump(), "odd.json");
    EXPECT_FALSE(parsed) << pointer;
    return parsed ? std::string() : parsed.error().message;
  };
  EXPECT_EQ(refused("/profile/name", 5),
            "Failed to read lock 'odd.json': \"profile.name\" is not a string");
  EXPECT_EQ(refused("/profile/file", Json::array()),
            "Failed to read lock 'odd.json': \"profile.file\" is not a string");
  EXPECT_EQ(refused("/unit/node_rank", "1"),
            "Failed to read lock 'odd.json': \"unit.node_rank\" is not a rank (0 to 1023)");
  EXPECT_EQ(refused("/unit/node_rank", -1),
            "Failed to read lock 'odd.json': \"unit.node_rank\" is not a rank (0 to 1023)");
}

TEST_F(LockTest, NestingBeyondTheBoundIsRefusedWhereverItIs) {
  Json locked = lock();
  Json deep = Json::array();
  for (int i = 0; i < 70; ++i) deep = Json::array({deep});
  locked["model"]["extra"] = deep;
  auto parsed = parse_lock(locked.dump(), "deep.json");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "Failed to read lock 'deep.json': nested deeper than 64 levels");
}

// Caches (a lock taken on its node records them): a changed fingerprint is drift, a changed
// content only a note, and a lock without caches compares none.
TEST_F(LockTest, CacheFingerprintIsDriftItsContentANote) {
  const auto with_caches = [this](const std::string& fingerprint, const std::string& digest,
                                  int files) {
    Json document = lock();
    document["caches"]["flashinfer"] = {{"path", "/var/cache/gpulaunch/lk/flashinfer"},
                                        {"fingerprint", fingerprint},
                                        {"digest", digest},
                                        {"files", files},
                                        {"bytes", files * 10}};
    return document;
  };
  const std::string a(64, 'a');
  const std::string b(64, 'b');
  const auto locked = with_caches("00000000000000f1", a, 3);
  EXPECT_THAT(drift(locked, with_caches("00000000000000f1", b, 5)), ElementsAre());
  const auto notes = cache_notes(locked, with_caches("00000000000000f1", b, 5));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].key, "caches.flashinfer.digest");
  EXPECT_EQ(notes[0].a, "aaaaaaaaaaaa (3 files)");
  EXPECT_EQ(notes[0].b, "bbbbbbbbbbbb (5 files)");
  EXPECT_THAT(drift_rows(locked, with_caches("00000000000000f2", a, 3)),
              ElementsAre("caches.flashinfer.fingerprint  00000000000000f1  00000000000000f2  the "
                          "facts this cache's entries depend on changed: they are stale, and the "
                          "next start clears the cache"));
  EXPECT_THAT(drift(locked, lock()), ElementsAre());
  EXPECT_TRUE(cache_notes(locked, lock()).empty());
}

// The upgrade gate's record a lock copies (`gate record`, then `lock`) is the engine's answers, not
// the node: no drift, whether the live side has one or another.
TEST_F(LockTest, TheGateRecordIsNoDrift) {
  auto locked = lock();
  locked["gate"] = {{"tokens_per_second", 320.0}, {"answers", {{{"prompt", "p"}, {"text", "a"}}}}};
  EXPECT_THAT(drift(locked, lock()), ElementsAre());
  auto live = lock();
  live["gate"] = {{"tokens_per_second", 64.0}, {"answers", {{{"prompt", "p"}, {"text", "b"}}}}};
  EXPECT_THAT(drift(locked, live), ElementsAre());
}

// The cache archive a lock names (`lock --cache-archive`): drift only when verify is given one
// and it is another; a lock without one, or a verify without one, compares nothing.
TEST_F(LockTest, ANamedCacheArchiveIsDriftOnlyWhenAnotherIsGiven) {
  const std::string path = ::testing::TempDir() + "/gl-lock-archive";
  const auto with_archive = [&](const std::string& content) {
    std::ofstream(path) << content;
    Json document = lock();
    EXPECT_TRUE(add_cache_archive(document, path));
    return document;
  };
  const auto locked = with_archive("seeded caches");
  ASSERT_TRUE(parse_lock(locked.dump(), "l.json"));
  EXPECT_EQ(locked["cache_archive"]["sha256"], sha256_hex("seeded caches"));
  EXPECT_THAT(drift(locked, with_archive("seeded caches")), ElementsAre());
  EXPECT_THAT(drift(locked, lock()), ElementsAre());
  EXPECT_THAT(drift(lock(), with_archive("other caches")), ElementsAre());
  const auto rows = drift(locked, with_archive("other caches"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "cache_archive.sha256");
  EXPECT_EQ(rows[0].b, sha256_hex("other caches"));
  EXPECT_THAT(rows[0].why, ::testing::HasSubstr("another cache archive than the lock names"));
  Json odd = lock();
  odd["cache_archive"] = 3;
  auto parsed = parse_lock(odd.dump(), "odd.json");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "Failed to read lock 'odd.json': \"cache_archive.sha256\" is not a string");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gl
