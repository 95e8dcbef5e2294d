// SPDX-License-Identifier: Apache-2.0
// engine.image judged against the host: the image read at all, the driver against the CUDA the
// image's torch (or its base image) is built for, with the forward-compatibility libcuda it may
// carry, and the CDI devices `podman run --device` names. The image's Python is Facts::python, so
// the GPU-architecture and FlashInfer rules judge it as they judge a venv.

#include <algorithm>

#include <fmt/core.h>

#include "catalog/containers.hpp"
#include "catalog/cuda_arch.hpp"
#include "rules/check_rules.hpp"
#include "util/version.hpp"

namespace gl::check_rules {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text.empty() ? "none" : text;
}

// The CUDA the engine's process loads: torch's build, else the base image's CUDA_VERSION.
std::optional<std::string> image_cuda(const Facts& facts) {
  if (facts.python && facts.python->torch_cuda) return facts.python->torch_cuda;
  return facts.image->cuda_version;
}

void check_image_driver(const Context& context, std::vector<Finding>& findings) {
  const Facts& facts = context.facts;
  const ImageFact& image = *facts.image;
  auto cuda = image_cuda(facts);
  auto needed_major = major_of(cuda);
  auto driver_major = major_of(facts.driver.max_cuda);
  if (!needed_major || !driver_major || *driver_major >= *needed_major) return;
  const int min_driver = min_driver_for(*needed_major).value_or(0);
  auto compat_major = major_of(image.compat_driver);
  std::vector<std::pair<std::string, std::string>> shown{
      {"image", image.reference},
      {"image CUDA", *cuda},
      {"driver", facts.driver.version.value_or("?")},
      {"driver runs CUDA up to", *facts.driver.max_cuda},
      {"compat libcuda", joined(image.compat_libraries)}};
  if (compat_major && *compat_major >= min_driver) {
    add(findings,
        {Severity::warning, "image-needs-forward-compat",
         fmt::format("the image's CUDA {} runs on driver {} only through its forward-compatibility "
                     "libcuda {}",
                     *cuda, facts.driver.version.value_or("?"), *image.compat_driver),
         "forward compatibility works on NVIDIA data-center GPUs (and select NGC-ready RTX "
         "SKUs) only; elsewhere every CUDA call fails with error 804",
         shown,
         fmt::format("upgrade the driver to >= {} for CUDA {}, or confirm the GPUs are data-center "
                     "parts",
                     min_driver, *needed_major)});
    return;
  }
  add(findings,
      {Severity::error, "driver-too-old-for-image",
       fmt::format("the driver runs CUDA up to {}, the image {} is built for CUDA {} and carries "
                   "no forward-compatibility libcuda for it",
                   *facts.driver.max_cuda, image.reference, *cuda),
       "the driver's CUDA must be at least the image's major, or the image must bring a "
       "cuda-compat libcuda from a driver that new; otherwise the engine fails at its first CUDA "
       "call (error 803/804, or 35) and restarts in a loop while nvidia-smi inside still works",
       shown,
       fmt::format("upgrade the driver to >= {} for CUDA {}, or use an image built for CUDA {}",
                   min_driver, *needed_major, *driver_major)});
}

// A spec generated for another driver than the one running: podman mounts libraries that are
// gone (the start fails) or the old driver's user-space libraries against the new kernel module.
void check_cdi_driver(const Facts& facts, std::vector<Finding>& findings) {
  const auto& versions = facts.cdi->driver_versions;
  if (!facts.driver.version || versions.empty()) return;
  if (std::find(versions.begin(), versions.end(), *facts.driver.version) != versions.end()) return;
  add(findings,
      {Severity::error,
       "cdi-spec-stale",
       fmt::format("the CDI spec was generated for driver {}; this node runs {}", joined(versions),
                   *facts.driver.version),
       "the spec mounts the driver's libraries by version (libcuda.so.X.Y.Z): after a driver "
       "upgrade podman cannot find them and the container does not start, or the engine gets the "
       "old driver's user-space libraries against the new kernel module",
       {{"specs", joined(facts.cdi->specs)},
        {"spec driver", joined(versions)},
        {"driver", *facts.driver.version}},
       "generate the spec again: nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml (or "
       "enable nvidia-cdi-refresh.service, NVIDIA Container Toolkit 1.18+, to do it after each "
       "driver upgrade)"});
}

// A spec this podman cannot parse: every CDI device of the node is unresolvable, whatever the
// profile names ("unresolvable CDI devices"), and the container does not start.
void check_cdi_podman(const Facts& facts, std::vector<Finding>& findings) {
  const CdiFact& cdi = *facts.cdi;
  const auto podman = parse_version(cdi.podman_version);
  if (!podman) return;
  const auto row = std::ranges::find_if(kPodmanCdiSupport, [&](const PodmanCdiSupport& entry) {
    const auto release = parse_version(entry.podman);
    return release && release->major == podman->major && release->minor == podman->minor;
  });
  if (row == std::end(kPodmanCdiSupport)) return;
  const auto newest = parse_version(row->newest_spec);
  for (const auto& [path, version] : cdi.spec_versions) {
    const auto spec = parse_version(version);
    if (!spec || !newest || *spec <= *newest) continue;
    add(findings,
        {Severity::error,
         "cdi-spec-too-new",
         fmt::format("the CDI spec {} is version {}; podman {} reads at most {}", path, version,
                     cdi.podman_version, row->newest_spec),
         "podman refuses a spec of a version its CDI library does not know, so no CDI device it "
         "holds resolves and the container does not start",
         {{"spec", path}, {"cdiVersion", version}, {"podman", cdi.podman_version}},
         fmt::format("generate a spec of version {} or older with an NVIDIA Container Toolkit "
                     "that writes one (1.19 writes 0.7.0), or install a podman that reads {}",
                     row->newest_spec, version)});
  }
}

void check_cdi(const Context& context, const LaunchPlan& plan, std::vector<Finding>& findings) {
  const Facts& facts = context.facts;
  if (!facts.cdi) return;
  check_cdi_freshness(facts, findings);
  std::vector<std::string> missing;
  for (const auto& device : plan.gpus)
    if (std::find(facts.cdi->gpu_devices.begin(), facts.cdi->gpu_devices.end(), device) ==
        facts.cdi->gpu_devices.end())
      missing.push_back(std::string(kCdiGpuKind) + "=" + device);
  if (missing.empty()) return;
  std::string directories;
  for (auto directory : cdi_spec_directories())
    directories += (directories.empty() ? "" : ", ") + std::string(directory);
  add(findings,
      {Severity::error,
       "cdi-device-missing",
       fmt::format("no CDI spec offers {}", joined(missing)),
       "podman gives the container its GPUs as CDI devices, which a spec in " + directories +
           " must name",
       {{"missing", joined(missing)},
        {"specs", joined(facts.cdi->specs)},
        {"devices offered", joined(facts.cdi->gpu_devices)}},
       "generate the spec for this driver: nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml "
       "(again after each driver upgrade)"});
}

}  // namespace

void check_cdi_freshness(const Facts& facts, std::vector<Finding>& findings) {
  if (!facts.cdi) return;
  check_cdi_driver(facts, findings);
  check_cdi_podman(facts, findings);
}

// Root's podman resolves each bind mount's source by name at every start (the OCI runtime mounts
// it as root): a link planted there would show the container's user a tree its own uid cannot
// reach on the host (a file under a 0700 parent), so a source a non-root user could replace is
// refused, naming who could.
static void check_image_mounts(const Context& context, std::vector<Finding>& findings) {
  for (const MountSourceFact& mount : context.facts.container_mounts) {
    if (!mount.replaceable) continue;
    add(findings, {Severity::error,
                   "image-mount-replaceable",
                   fmt::format("root's podman would bind-mount '{}' into the container, and {}",
                               mount.path, *mount.replaceable),
                   "root resolves a mount's source at every start and follows a link there, so "
                   "every directory mounted into an engine's container must be reachable through "
                   "directories only root can change, with no symbolic link on the way",
                   {{"mount", mount.path}, {"replaceable", *mount.replaceable}},
                   "name the directory itself rather than a link to it, and keep it under "
                   "directories only root can write (chown root:root and chmod go-w each one "
                   "above it), e.g. move the model under /srv or /var/lib"});
  }
}

void check_image(const Context& context, const LaunchPlan& plan, std::vector<Finding>& findings) {
  const Facts& facts = context.facts;
  check_image_mounts(context, findings);
  if (!facts.image) return;
  const ImageFact& image = *facts.image;
  if (!image.problems.empty() || !facts.python) {
    add(findings,
        {Severity::error,
         "image-unreadable",
         fmt::format("the image {} could not be read", image.reference),
         "check reads the image's CUDA and Python packages with podman image inspect "
         "and podman image mount, as root",
         {{"image", image.reference}, {"problems", joined(image.problems)}},
         "pull or load the image into root's podman store (podman pull " + image.reference + ")"});
    return;
  }
  check_image_driver(context, findings);
  check_cdi(context, plan, findings);
}

}  // namespace gl::check_rules
