// SPDX-License-Identifier: Apache-2.0
#pragma once
// The NVIDIA device nodes an engine opens, and what creates them at boot (issue 26). On most
// installs /dev/nvidia-uvm and /dev/nvidiaN appear on the first CUDA call, made by the setuid
// nvidia-modprobe; inside the engine's unit (NoNewPrivileges=yes, no capabilities, the device
// list fixed at start) that cannot happen. The package's root oneshot unit runs nvidia-modprobe
// before any engine (flags: NVIDIA/nvidia-modprobe option-table.h at 149440c). Pure data.

#include <string_view>

namespace gl {

// The oneshot unit (units/) every engine unit Requires= and orders After=.
inline constexpr std::string_view kNvidiaDevicesUnit = "gpulaunch-nvidia-devices.service";
// Where the package installs it, which `check` reads (under --root). Engine units pull it in
// (Requires=) whether it is enabled or not.
inline constexpr std::string_view kNvidiaDevicesUnitPath =
    "/usr/lib/systemd/system/gpulaunch-nvidia-devices.service";
// The driver's own program (Debian's nvidia-modprobe package), root-owned.
inline constexpr std::string_view kNvidiaModprobe = "/usr/bin/nvidia-modprobe";
inline constexpr std::string_view kModprobeUnifiedMemory = "-u";  // nvidia-uvm and its node
inline constexpr std::string_view kModprobeMinor = "-c";          // /dev/nvidiaN for minor N
inline constexpr std::string_view kModprobeCapability = "-f";     // a /proc capability's node
inline constexpr std::string_view kModprobeImexChannels = "-i";   // "start:count" IMEX channels

// The loaded driver (kernel-open/nvidia/nv-procfs.c): its version file, and one directory per
// GPU whose "information" file holds "Device Minor: N".
inline constexpr std::string_view kDriverVersionFile = "/proc/driver/nvidia/version";
inline constexpr std::string_view kDriverGpusDirectory = "/proc/driver/nvidia/gpus";
inline constexpr std::string_view kDeviceMinorField = "Device Minor:";
// Before the nvidia module is loaded: the NVIDIA display controllers on the PCI bus, one minor
// each from 0, as nvidia-modprobe counts them itself (modprobe-utils/pci-sysfs.c at 149440c):
// vendor 0x10de, class 0x0300xx (VGA) or 0x0302xx (3D controller).
inline constexpr std::string_view kPciDevicesDirectory = "/sys/bus/pci/devices";
inline constexpr std::string_view kNvidiaPciVendor = "0x10de";
inline constexpr std::string_view kPciVgaClass = "0x0300";
inline constexpr std::string_view kPci3dClass = "0x0302";
// Character-device majors the kernel registered, "MAJOR NAME" a line.
inline constexpr std::string_view kProcDevices = "/proc/devices";
inline constexpr std::string_view kUvmMajorName = "nvidia-uvm";
inline constexpr std::string_view kUvmNode = "/dev/nvidia-uvm";
inline constexpr std::string_view kGpuNodePrefix = "/dev/nvidia";  // + minor
// MIG's capabilities (kernel-open/nvidia/nv-caps.c): nvidia-modprobe -f makes their nodes under
// /dev/nvidia-caps.
inline constexpr std::string_view kMigConfigCapability =
    "/proc/driver/nvidia/capabilities/mig/config";
inline constexpr std::string_view kMigMonitorCapability =
    "/proc/driver/nvidia/capabilities/mig/monitor";
// IMEX channels (multi-node NVLink, R550+): the major "nvidia-caps-imex-channels"; IMEX's
// default configuration uses channel 0 (NVIDIA IMEX guide, "Channels").
inline constexpr std::string_view kImexChannelsMajorName = "nvidia-caps-imex-channels";
inline constexpr std::string_view kImexDefaultChannels = "0:1";

}  // namespace gl
