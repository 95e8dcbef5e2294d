// SPDX-License-Identifier: Apache-2.0
#include "caches/fingerprint.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace gl {
namespace {

FingerprintInputs sample() {
  FingerprintInputs inputs;
  inputs.toolkit_path = "/usr/local/cuda-13.0";
  inputs.toolkit_version = "13.0.48";
  inputs.driver_version = "580.65.06";
  inputs.gpu_archs = {"12.0", "9.0"};
  inputs.torch_version = "2.9.0";
  inputs.flashinfer_version = "0.4.1";
  inputs.triton_version = "3.5.0";
  inputs.engine = "sglang";
  inputs.engine_version = "0.5.4";
  inputs.arch_list = "12.0a";
  return inputs;
}

TEST(Fingerprint, EqualInputsGiveEqualHashesWhateverTheArchOrder) {
  auto reordered = sample();
  reordered.gpu_archs = {"9.0", "12.0", "12.0"};
  EXPECT_EQ(fingerprint_hash(sample()), fingerprint_hash(reordered));
  EXPECT_EQ(fingerprint_hex(fingerprint_hash(sample())).size(), 16u);
}

TEST(Fingerprint, EveryFactChangesTheHash) {
  const auto base = fingerprint_hash(sample());
  for (size_t i = 0; i < fingerprint_fields(sample()).size(); ++i) {
    auto changed = sample();
    std::string* fields[] = {&changed.toolkit_path,   &changed.toolkit_version,
                             &changed.driver_version, nullptr,
                             &changed.torch_version,  &changed.flashinfer_version,
                             &changed.triton_version, &changed.engine,
                             &changed.engine_version, &changed.arch_list};
    if (fields[i])
      *fields[i] += "x";
    else
      changed.gpu_archs.push_back("10.0");
    EXPECT_NE(fingerprint_hash(changed), base) << fingerprint_fields(sample())[i].name;
  }
}

// A venv engine's stamps are what they were before images existed (no cache is cleared by the
// upgrade); an image's digest is a fact of its own, and a new digest changes the hash.
TEST(Fingerprint, AnImageDigestIsAFactOnlyForAnImage) {
  EXPECT_EQ(fingerprint_fields(sample()).back().name, "arch_list");
  EXPECT_EQ(fingerprint_hex(fingerprint_hash(sample())),
            fingerprint_hex(fingerprint_hash(fingerprint_fields(sample()))));
  auto image = sample();
  image.image_digest = "sha256:aaaa";
  EXPECT_EQ(fingerprint_fields(image).back().name, "image_digest");
  EXPECT_NE(fingerprint_hash(image), fingerprint_hash(sample()));
  auto retagged = image;
  retagged.image_digest = "sha256:bbbb";
  EXPECT_NE(fingerprint_hash(retagged), fingerprint_hash(image));
  EXPECT_EQ(describe_changes(fingerprint_fields(image), fingerprint_fields(retagged)),
            "image_digest sha256:aaaa -> sha256:bbbb");
}

TEST(Fingerprint, ValuesCannotForgeAnotherLine) {
  auto sneaky = sample();
  sneaky.toolkit_path = "/opt/cuda\ntoolkit_version=13.0.48";
  auto text = canonical_text(fingerprint_fields(sneaky));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10);
  EXPECT_NE(fingerprint_hash(sneaky), fingerprint_hash(sample()));
}

TEST(Fingerprint, DescribeChangesNamesWhatChanged) {
  auto before = sample();
  before.toolkit_version = "12.8.93";
  before.driver_version = "";
  EXPECT_EQ(describe_changes(fingerprint_fields(before), fingerprint_fields(sample())),
            "toolkit_version 12.8.93 -> 13.0.48, driver_version (unknown) -> 580.65.06");
  EXPECT_EQ(describe_changes(fingerprint_fields(sample()), fingerprint_fields(sample())), "");
}

}  // namespace
}  // namespace gl
