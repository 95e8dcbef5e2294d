// SPDX-License-Identifier: Apache-2.0
#include "profile/key_diff.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

std::vector<KeyChange> diffed(std::string_view old_text, std::string_view new_text) {
  auto changes = diff_profile_texts(old_text, "old.toml", new_text, "new.toml");
  EXPECT_TRUE(changes) << changes.error().message;
  return changes ? *changes : std::vector<KeyChange>{};
}

std::string line(const KeyChange& change) {
  return std::string(key_change_name(change.kind)) + " " + change.key + " " +
         change.old_value.value_or("-") + " " + change.new_value.value_or("-");
}

TEST(KeyDiff, NamesAddedRemovedAndChangedKeysWithTheirValuesSortedByKey) {
  const auto changes = diffed(
      "name = 'demo'\n[engine]\nkind = 'vllm'\nmax_requests = 64\nquantization = 'fp8'\n"
      "mem_fraction = 0.85\n",
      "name = 'demo'\n[engine]\nkind = 'vllm'\nmax_requests = 128\nmem_fraction = 0.9\n"
      "[env]\nFOO = 'bar'\n");
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(line(changes[0]), "changed engine.max_requests 64 128");
  EXPECT_EQ(line(changes[1]), "changed engine.mem_fraction 0.85 0.9");
  EXPECT_EQ(line(changes[2]), "removed engine.quantization 'fp8' -");
  EXPECT_EQ(line(changes[3]), "added env.FOO - 'bar'");
}

TEST(KeyDiff, SameKeysWrittenDifferentlyAreNoChange) {
  EXPECT_TRUE(diffed("[engine]\nport = 8000\n[model]\npath = '/m'\n",
                     "model.path = \"/m\"\nengine = { port = 8_000 }\n")
                  .empty());
}

TEST(KeyDiff, AnArrayIsOneValueAndATableOfTablesIsIndexed) {
  const auto changes = diffed("gpus = [0, 1]\n[[gate.prompt]]\ntext = 'a'\n",
                              "gpus = [1, 0]\n[[gate.prompt]]\ntext = 'b'\n");
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(line(changes[0]), "changed gate.prompt[0].text 'a' 'b'");
  EXPECT_EQ(line(changes[1]), "changed gpus [ 0, 1 ] [ 1, 0 ]");
}

TEST(KeyDiff, KeysThatNeedQuotesAreQuoted) {
  const auto changes = diffed("[env]\n\"A.B\" = '1'\n", "[env]\n\"A.B\" = '2'\n");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].key, "env.\"A.B\"");
}

TEST(KeyDiff, AValueThatBecomesATableIsRemovedAndItsKeysAdded) {
  const auto changes = diffed("model = 'x'\n", "[model]\npath = '/m'\n");
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(line(changes[0]), "removed model 'x' -");
  EXPECT_EQ(line(changes[1]), "added model.path - '/m'");
}

TEST(KeyDiff, BadTextIsRefusedWithItsOriginLineAndColumn) {
  auto changes = diff_profile_texts("a = 1\n", "old.toml", "a = 1\nb = \n", "new.toml");
  ASSERT_FALSE(changes);
  EXPECT_EQ(changes.error().message.rfind("new.toml:2:", 0), 0u) << changes.error().message;
}

}  // namespace
}  // namespace gl
