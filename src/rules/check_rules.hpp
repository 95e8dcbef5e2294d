// SPDX-License-Identifier: Apache-2.0
#pragma once
// check's rules by concern, each group in its own file, and what they share: the context
// computed once and the helpers that word findings alike. Internal to rules/: check.cpp runs the
// groups in order (evaluate); nothing outside rules/ includes this.

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "catalog/cuda_arch.hpp"
#include "catalog/flashinfer_arch_list.hpp"
#include "facts/environment.hpp"
#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "rules/finding.hpp"

namespace gl::check_rules {

// What the rules need besides the raw facts, computed once.
struct Context {
  const Profile& profile;
  const Facts& facts;
  std::vector<const GpuFact*> gpus;             // the ones the engine gets
  std::vector<ComputeCapability> capabilities;  // distinct, ascending
  // FLASHINFER_CUDA_ARCH_LIST in the unit: FlashInfer compiles for these instead of the GPUs.
  std::optional<std::string> arch_list_text;
  std::expected<std::vector<FlashInferArch>, ArchListError> arch_list;
};

Context make_context(const Profile& profile, const Facts& facts, const LaunchPlan& plan);

// Wording shared by the rules.
std::string quoted(const std::string& value);
std::string pin_fix(const std::string& root);
std::string sm_name(ComputeCapability capability);
std::string capability_name(ComputeCapability capability);
std::optional<int> major_of(const std::optional<std::string>& version);
std::string toolkit_label(const ToolkitFact& toolkit);
const GpuFact* mig_mode_gpu(const Facts& facts);
// The package version the rules know a Python package by, if installed.
std::optional<std::string> package_version(const Context& context, const std::string& name);
// "2 x NVIDIA H100 (GPU 0,1), compute capability 9.0"
std::string gpus_text(const Context& context, ComputeCapability capability);
void add(std::vector<Finding>& findings, Finding finding);

// The rules about the node alone, shared by the profile's check and `check --node`
// (rules/node_verdict), which pass no profile.
struct DriverVerdict {
  bool lost = false;    // a GPU fell off the bus (gpu-lost)
  bool usable = false;  // the driver answers: the GPUs' facts can be judged
};
// The driver and the GPUs it reaches: a lost GPU, the module not loaded, no driver at all.
// `needed_per_node`: the profile's GPUs per node, named beside a lost GPU.
DriverVerdict check_driver(const Facts& facts,
                           std::optional<long long> needed_per_node,  // gpu_rules
                           std::vector<Finding>& findings);
// Each toolkit in the node's own places (/usr/local/cuda*, /usr/bin/nvcc) against the node's GPUs
// and driver, as the profile's check judges the unit's toolkit; warnings: a job may bring its own.
void check_node_toolkits(const Facts& facts, std::vector<Finding>& findings);  // toolkit_rules
// The CDI specs against the running driver and podman: stale or too new for podman.
void check_cdi_freshness(const Facts& facts, std::vector<Finding>& findings);  // image_rules

// The groups, in the order evaluate runs them.
void check_gpus(const Context& context, std::vector<Finding>& findings);  // gpu_rules
void check_toolkit(const Context& context, const LaunchPlan& plan,        // toolkit_rules
                   const ShellEnvironment& shell, std::vector<Finding>& findings);
void check_engine(const Context& context, const LaunchPlan& plan,  // engine_rules
                  std::vector<Finding>& findings);
void check_flashinfer_packages(const Context& context, const LaunchPlan& plan,  // flashinfer_rules
                               std::vector<Finding>& findings);
void check_cubins(const Context& context, const LaunchPlan& plan,  // flashinfer_rules
                  std::vector<Finding>& findings);
void check_image(const Context& context, const LaunchPlan& plan,  // image_rules
                 std::vector<Finding>& findings);
void check_trust(const Context& context, std::vector<Finding>& findings);  // trust_rules
void check_liveness_key(const Profile& profile, const LaunchPlan& plan,    // liveness_rules
                        std::vector<Finding>& findings);
void check_liveness_options_file(const Profile& profile, const LaunchPlan& plan,  // liveness_rules
                                 std::vector<Finding>& findings);

}  // namespace gl::check_rules
