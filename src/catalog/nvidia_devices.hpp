// SPDX-License-Identifier: Apache-2.0
#pragma once
// The NVIDIA device nodes an engine opens, and what creates them at boot (issues 26, 42). On most
// installs /dev/nvidia-uvm and /dev/nvidiaN appear on the first CUDA call, made by the setuid
// nvidia-modprobe; inside the engine's unit (NoNewPrivileges=yes, no capabilities, the device
// list fixed at start) that cannot happen. The package's root oneshot unit runs nvidia-modprobe
// before any engine, one call per mode, as its main() dispatches them. Pure data.

#include <array>
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

// nvidia-modprobe's options (NVIDIA/nvidia-modprobe option-table.h and main() in
// nvidia-modprobe.c, read at 535.161.07 and 610.43.03). `-u` is a mode, not a device: with it,
// every `-c N` is nvidia_uvm_mknod(N) (/dev/nvidia-uvm minor N, -tools N+1) and no /dev/nvidiaN
// is made; without it, `-c N` is nvidia_mknod(N) (/dev/nvidiaN, 255 = /dev/nvidiactl, major
// 195). `-f PATH` runs after either mode. So each mode is a call of its own.
inline constexpr std::string_view kModprobeUnifiedMemory = "-u";
inline constexpr std::string_view kModprobeMinor = "-c";
inline constexpr std::string_view kModprobeCapability = "-f";
inline constexpr int kControlMinor = 255;  // nvidia-modprobe-utils.h NV_CTL_DEVICE_NUM
inline constexpr std::string_view kControlNode = "/dev/nvidiactl";
// `-i START:COUNT` made IMEX channel nodes only in 550.54.14-550.127.05 and 555.42.02-565.77
// (option-table.h "nvidia-imex-channel-device-file"); 550.135 and 570.86.16 removed it, and an
// unknown option is "Invalid commandline", exit 1, before anything is made. Before 435 `-i` was
// another option ("module-instance"). So gpulaunch passes it only where the installed program's
// --help lists the long name.
inline constexpr std::string_view kModprobeImexChannels = "-i";
inline constexpr std::string_view kModprobeImexLongOption = "--nvidia-imex-channel-device-file";
inline constexpr std::string_view kModprobeImexReleases =
    "550.54.14-550.127.05 and 555.42.02-565.77";
inline constexpr std::string_view kModprobeImexChannel0 = "0:1";
inline constexpr std::string_view kModprobeHelp = "--help";
// The line --help and --version begin with (nvidia-modprobe.c print_version: NV_ID_STRING).
inline constexpr std::string_view kModprobeVersionPrefix = "nvidia-modprobe:  version ";

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

// Character-device majors the kernel registered: /proc/devices, "MAJOR NAME" lines under
// "Character devices:" (nvidia-modprobe's nvidia_get_chardev_major reads the same section).
inline constexpr std::string_view kProcDevices = "/proc/devices";
inline constexpr std::string_view kCharacterDevicesHeading = "Character devices:";
// /dev/nvidiaN and /dev/nvidiactl: major 195 (kernel-open/common/inc/nv-chardev-numbers.h),
// registered as "nvidia" and "nvidiactl" (kernel-open/nvidia/nv.c nv_register_chrdev, 550.54.14
// to 595.45.04) or as one "nvidia-frontend" (kernel-open/nvidia/nv-frontend.c, 535.161.07).
inline constexpr std::array<std::string_view, 3> kGpuMajorNames = {"nvidia", "nvidiactl",
                                                                   "nvidia-frontend"};
inline constexpr std::string_view kGpuNodePrefix = "/dev/nvidia";  // + minor
// nvidia-uvm: a dynamic major with minors 0 and 1 (kernel-open/nvidia-uvm/uvm.c
// alloc_chrdev_region, uvm_common.h NVIDIA_UVM_PRIMARY_MINOR_NUMBER/TOOLS, 595.45.04).
inline constexpr std::string_view kUvmMajorName = "nvidia-uvm";
inline constexpr std::string_view kUvmNode = "/dev/nvidia-uvm";
inline constexpr std::string_view kUvmToolsNode = "/dev/nvidia-uvm-tools";
inline constexpr int kUvmMinor = 0;
inline constexpr int kUvmToolsMinor = 1;
// MIG's capabilities (kernel-open/nvidia/nv-caps.c, major "nvidia-caps"): each /proc file
// holds "DeviceFileMinor: N"; nvidia-modprobe -f makes /dev/nvidia-caps/nvidia-capN
// (nvidia-modprobe-utils.h NV_CAP_DEVICE_NAME).
inline constexpr std::string_view kMigConfigCapability =
    "/proc/driver/nvidia/capabilities/mig/config";
inline constexpr std::string_view kMigMonitorCapability =
    "/proc/driver/nvidia/capabilities/mig/monitor";
inline constexpr std::string_view kCapsMajorName = "nvidia-caps";
inline constexpr std::string_view kCapabilityMinorField = "DeviceFileMinor:";
inline constexpr std::string_view kCapabilityNodePrefix = "/dev/nvidia-caps/nvidia-cap";
// IMEX channels (multi-node NVLink, R550+; kernel-open/nvidia/nv-caps-imex.c, 595.45.04): the
// major "nvidia-caps-imex-channels", channel N is minor N at
// /dev/nvidia-caps-imex-channels/channelN. The driver makes no node itself (nv-reg.h
// NVreg_ImexChannelCount: "must be handled by the administrator") unless loaded with
// NVreg_CreateImexChannel0=1 (555.42.02 and later; default 0), which makes channel0 mode 0666.
inline constexpr std::string_view kImexChannelsMajorName = "nvidia-caps-imex-channels";
inline constexpr std::string_view kImexChannel0Node = "/dev/nvidia-caps-imex-channels/channel0";
inline constexpr int kImexChannel0Minor = 0;
inline constexpr std::string_view kImexChannel0Option = "NVreg_CreateImexChannel0=1";

}  // namespace gl
