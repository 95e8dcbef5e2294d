// SPDX-License-Identifier: Apache-2.0
#include "plan/gpu_assignment.hpp"

#include <algorithm>
#include <charconv>

namespace gl {

std::vector<std::string> assigned_gpus(const Profile& profile) {
  if (!profile.gpus.devices.empty()) return profile.gpus.devices;
  std::vector<std::string> devices;
  for (long long i = 0; i < profile.gpus.count.value_or(profile.gpus_per_node()); ++i)
    devices.push_back(std::to_string(i));
  return devices;
}

bool names_gpu(std::string_view device, const GpuFact& gpu) {
  return device == gpu.uuid || device == std::to_string(gpu.index);
}

std::vector<const GpuFact*> assigned_gpu_facts(const std::vector<std::string>& devices,
                                               const Facts& facts) {
  std::vector<const GpuFact*> gpus;
  for (const auto& device : devices) {
    auto found = std::find_if(facts.gpus.begin(), facts.gpus.end(),
                              [&](const GpuFact& gpu) { return names_gpu(device, gpu); });
    if (found != facts.gpus.end()) gpus.push_back(&*found);
  }
  return gpus;
}

std::string visible_devices_value(const std::vector<std::string>& devices) {
  std::string value;
  for (const auto& device : devices) value += (value.empty() ? "" : ",") + device;
  return value;
}

std::vector<int> visible_device_indices(std::string_view value) {
  std::vector<int> indices;
  while (!value.empty()) {
    auto word = value.substr(0, value.find(','));
    value.remove_prefix(std::min(value.size(), word.size() + 1));
    int index = 0;
    auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), index);
    if (error != std::errc{} || end != word.data() + word.size()) return {};
    indices.push_back(index);
  }
  return indices;
}

}  // namespace gl
