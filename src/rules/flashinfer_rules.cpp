// SPDX-License-Identifier: Apache-2.0
// FlashInfer's packages and downloaded cubins: versions that must agree, and where the unit
// makes FlashInfer read its cubins.
#include "rules/check_rules.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "catalog/cuda_arch.hpp"
#include "catalog/engines.hpp"
#include "catalog/flashinfer_arch_list.hpp"
#include "catalog/flashinfer_packages.hpp"
#include "catalog/node_health.hpp"
#include "engines/engine_argv.hpp"
#include "facts/node_fs.hpp"
#include "facts/python_env.hpp"
#include "plan/gpu_assignment.hpp"
#include "plan/launch_plan.hpp"
#include "profile/api_key.hpp"
#include "profile/service_user.hpp"
#include "rules/gpu_health.hpp"
#include "rules/installed_profiles.hpp"
#include "rules/jit_toolkit.hpp"
#include "rules/node_checks.hpp"
#include "util/version.hpp"

namespace gl::check_rules {

// flashinfer-cubin and flashinfer-jit-cache must carry flashinfer-python's version, or
// `import flashinfer` raises (catalog/flashinfer_packages).
void check_flashinfer_packages(const Context& context, const LaunchPlan& plan,
                               std::vector<Finding>& findings) {
  auto flashinfer = package_version(context, "flashinfer");
  if (!flashinfer || lookup(plan.environment, kFlashInferDisableVersionCheck)) return;
  const std::string public_version = flashinfer->substr(0, flashinfer->find('+'));
  for (const auto& row : flashinfer_companions()) {
    auto companion = package_version(context, std::string(row.dist));
    if (!companion || flashinfer_companion_matches(row, *flashinfer, *companion)) continue;
    if (!row.skipped_by.empty() && lookup(plan.environment, row.skipped_by)) continue;
    const auto& python = *context.facts.python;
    auto label = row.per_cuda ? cuda_wheel_label(*companion, python.torch_cuda) : std::nullopt;
    if (row.per_cuda && !label) continue;
    std::string requirement =
        fmt::format("{}=={}{}", row.pip_name, public_version, label ? "+" + *label : "");
    add(findings,
        {Severity::error,
         "flashinfer-packages-mismatch",
         fmt::format("{} {} does not match flashinfer-python {}: `import flashinfer` raises "
                     "\"{} version ({}) does not match flashinfer version ({})\"",
                     row.pip_name, *companion, *flashinfer, row.pip_name, *companion, *flashinfer),
         fmt::format("{} must carry flashinfer-python's version{} (flashinfer/jit/env.py)",
                     row.pip_name,
                     row.match == VersionMatch::prefix ? " before its CUDA label" : ""),
         {{"flashinfer-python", *flashinfer},
          {std::string(row.pip_name), *companion},
          {"venv", python.prefix}},
         fmt::format("{}/bin/python -m pip install --upgrade --no-deps --index-url {}{} \"{}\"",
                     python.prefix, kFlashInferWheelIndex, label ? "/" + *label : "",
                     requirement)});
  }
}

// FlashInfer's downloaded cubins (flashinfer v0.6.18 jit/env.py, jit/cubin_loader.py): where the
// unit makes it read them, and whether it may fetch the ones missing there.
void check_cubins(const Context& context, const LaunchPlan& plan, std::vector<Finding>& findings) {
  const auto& python = context.facts.python;
  auto installed = [&](const std::string& module) {
    auto found = python->modules.find(module);
    return found != python->modules.end() && found->second;
  };
  if (!python || !installed("flashinfer")) return;
  const auto cubins = flashinfer_cubin_directory(plan);
  if (!cubins) return;
  const bool package = installed("flashinfer_cubin");
  std::vector<std::string> package_dirs;
  for (const auto& site : python->site_packages)
    package_dirs.push_back(site + "/flashinfer_cubin/cubins");
  // FLASHINFER_CUBIN_DIR wins over the flashinfer-cubin package: its cubins go unread unless
  // [env] names the package's own directory.
  if (package && cubins->explicit_choice && !package_dirs.empty() &&
      std::find(package_dirs.begin(), package_dirs.end(), cubins->path) == package_dirs.end())
    add(findings,
        {Severity::warning,
         "flashinfer-cubin-package-unused",
         fmt::format("flashinfer-cubin is installed in '{}', but [env] sets "
                     "FLASHINFER_CUBIN_DIR='{}', so FlashInfer never reads the package's cubins",
                     python->prefix, cubins->path),
         "FlashInfer reads cubins from FLASHINFER_CUBIN_DIR when it is set, from the "
         "flashinfer-cubin package only when it is not (flashinfer/jit/env.py)",
         {{std::string(kFlashinferCubinDirVariable), cubins->path},
          {"flashinfer-cubin", package_dirs.front()}},
         fmt::format("remove FLASHINFER_CUBIN_DIR from [env], or point it at the package: "
                     "[env] FLASHINFER_CUBIN_DIR = \"{}\"",
                     package_dirs.front())});
  // Offline, the package's cubins are all there; otherwise the directory must already hold them.
  const auto no_download = lookup(plan.environment, kFlashinferNoDownload);
  if (!no_download || (package && !cubins->explicit_choice)) return;
  const PathFact* directory = context.facts.path(cubins->path);
  if (directory && !directory->has_entries)
    add(findings,
        {Severity::warning,
         "flashinfer-cubins-missing-offline",
         fmt::format("FlashInfer may not download cubins ({} is set) and '{}' holds none",
                     kFlashinferNoDownload, cubins->path),
         "with downloads off, a FlashInfer kernel that ships as a cubin (TensorRT-LLM attention "
         "and MoE, DeepGEMM) fails at its first use with \"Artifact not found locally\"",
         {{std::string(kFlashinferCubinDirVariable), cubins->path},
          {std::string(kFlashinferNoDownload), *no_download}},
         fmt::format("install flashinfer-cubin of the same version as flashinfer into '{}' "
                     "(its cubins need no download), or fill '{}' where the network is "
                     "reachable (FLASHINFER_CUBIN_DIR={} {}/bin/python -m flashinfer "
                     "download-cubin) and copy it here",
                     python->prefix, cubins->path, cubins->path, python->prefix)});
}

}  // namespace gl::check_rules
