// SPDX-License-Identifier: Apache-2.0
// The OS side of the node preflight's probes, on files laid out as the kernel and checkpoints
// lay them out.

#include <filesystem>

#include <gtest/gtest.h>

#include "facts/model_probe.hpp"
#include "facts/node_os.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

TEST(InfinibandProbe, PeerMemoryModuleIsMatchedByItsWholeName) {
  testing::TempDir root;
  root.write("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  root.write("sys/class/infiniband/mlx5_1/ports/1/state", "4: ACTIVE\n");
  // Only a module named exactly nvidia_peermem counts, not one whose name starts with it.
  root.write("proc/modules",
             "nvidia_peermem_helper 16384 0 - Live 0x0000000000000000\n"
             "mlx5_ib 475136 0 - Live 0x0000000000000000\n");
  auto fact = probe_infiniband(NodeFs(root.path()));
  EXPECT_EQ(fact.devices, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_TRUE(fact.modules_read);
  EXPECT_TRUE(fact.peer_memory.empty());

  root.write("proc/modules", "mlx5_ib 475136 0 - Live 0x0\nnv_peer_mem 16384 0 - Live 0x0\n");
  EXPECT_EQ(probe_infiniband(NodeFs(root.path())).peer_memory,
            (std::vector<std::string>{"nv_peer_mem (/proc/modules)"}));
}

// NCCL's own test (net_ib.cc): the module's sysfs version file, even where /proc/modules is
// unreadable.
TEST(InfinibandProbe, TheFileNcclTestsCountsToo) {
  testing::TempDir root;
  root.write("sys/module/nvidia_peermem/version", "580.95.05\n");
  auto fact = probe_infiniband(NodeFs(root.path()));
  EXPECT_FALSE(fact.modules_read);
  EXPECT_EQ(fact.peer_memory, (std::vector<std::string>{"/sys/module/nvidia_peermem/version"}));
  EXPECT_TRUE(fact.devices.empty());
}

TEST(ShmProbe, MissingDirectoryIsAFactAndAPresentOneHasASize) {
  testing::TempDir root;
  EXPECT_FALSE(probe_shm(NodeFs(root.path())).exists);
  fs::create_directories(root.path() / "dev/shm");
  auto fact = probe_shm(NodeFs(root.path()));
  EXPECT_TRUE(fact.exists);
  EXPECT_FALSE(fact.problem);
  EXPECT_GT(fact.size_bytes, 0u);
}

TEST(ModelProbe, IndexTotalSizeAndMultimodalTextConfig) {
  testing::TempDir root;
  root.write("models/k/model.safetensors.index.json",
             "{\"metadata\": {\"total_size\": 594000000000}, \"weight_map\": {}}");
  root.write("models/k/config.json",
             R"({"model_type": "kimi_k25", "text_config": {"num_hidden_layers": 61,
                 "kv_lora_rank": 512, "qk_rope_head_dim": 64, "num_attention_heads": 64,
                 "hidden_size": 7168, "max_position_embeddings": 262144}})");
  auto fact = probe_model(NodeFs(root.path()), "/models/k");
  EXPECT_EQ(fact.weights_bytes, 594000000000ULL);
  EXPECT_EQ(fact.weights_source, "model.safetensors.index.json metadata.total_size");
  EXPECT_EQ(fact.layers, 61);
  EXPECT_EQ(fact.kv_lora_rank, 512);
  EXPECT_EQ(fact.rope_head_dim, 64);
  EXPECT_EQ(fact.kv_heads, 64);  // num_attention_heads where num_key_value_heads is absent
  EXPECT_EQ(fact.head_dim, 112);
  EXPECT_EQ(fact.context, 262144);
  EXPECT_TRUE(fact.problems.empty());
}

// Hugging Face's cache keeps weights as links into blobs/: none is followed or counted.
TEST(ModelProbe, WeightFilesAreSummedAndLinksSkipped) {
  testing::TempDir root;
  root.write("models/m/a.safetensors", "");
  fs::resize_file(root.path() / "models/m/a.safetensors", 3'000'000);
  root.write("models/m/b.gguf", "12345");
  root.write("blobs/big", "");
  fs::resize_file(root.path() / "blobs/big", 9'000'000'000);
  fs::create_symlink(root.path() / "blobs/big", root.path() / "models/m/c.safetensors");
  root.write("models/m/notes.txt", "not a weight");
  auto fact = probe_model(NodeFs(root.path()), "/models/m");
  EXPECT_EQ(fact.weights_bytes, 3'000'005ULL);
  EXPECT_EQ(fact.links_skipped, 1);
  EXPECT_FALSE(fact.layers);

  // A config.json that is a link is refused, not read.
  fs::create_symlink(root.path() / "models/m/notes.txt", root.path() / "models/m/config.json");
  auto linked = probe_model(NodeFs(root.path()), "/models/m");
  ASSERT_EQ(linked.problems.size(), 1u);
  EXPECT_NE(linked.problems[0].find("symbolic link"), std::string::npos) << linked.problems[0];
}

}  // namespace
}  // namespace gl
