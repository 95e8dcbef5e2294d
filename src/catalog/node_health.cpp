// SPDX-License-Identifier: Apache-2.0
#include "catalog/node_health.hpp"

#include <algorithm>
#include <array>

#include "util/name_table.hpp"

namespace gl {
namespace {

constexpr NameTable<FabricState, 4> kFabricStateNames{{
    {FabricState::not_supported, "not-supported"},
    {FabricState::not_started, "not-started"},
    {FabricState::in_progress, "in-progress"},
    {FabricState::completed, "completed"},
}};

// The calls and their flags: nvml.h (NVIDIA/go-nvml gen/nvml/nvml.h, v0.13.3-0-10-g2f9e261). The
// severities follow DCGM's health checks (NVIDIA DCGM dcgmlib/dcgm_errors.h, 2023):
// DCGM_FR_VOLATILE_DBE_DETECTED, DCGM_FR_ROW_REMAP_FAILURE and DCGM_FR_UNCORRECTABLE_ROW_REMAP
// stop work on the GPU; DCGM_FR_PENDING_ROW_REMAP and DCGM_FR_PENDING_PAGE_RETIREMENTS ask for a
// reset while the GPU keeps working (nvml.h: "a pending remapping won't affect future work on the
// GPU"); DCGM_FR_PERSISTENCE_MODE is a configuration finding.
constexpr std::array kHealthThresholds{
    HealthThreshold{
        HealthCheck::ecc_uncorrected_volatile, "gpu-ecc-uncorrected", true, 0,
        "uncorrected ECC errors since the driver loaded: memory on this GPU returned data it "
        "could not correct, and the process that read it was killed (Xid 48/94/95)",
        "a GPU that starts an engine has no uncorrected ECC error since the driver loaded",
        "drain the GPU and reset it (`nvidia-smi -r -i {gpu}` with no process on it, or reboot); "
        "errors that come back after the reset mean the GPU needs service",
        "nvml.h nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, "
        "NVML_VOLATILE_ECC); DCGM dcgm_errors.h DCGM_FR_VOLATILE_DBE_DETECTED"},
    HealthThreshold{
        HealthCheck::row_remap_failure, "gpu-row-remap-failed", true, 0,
        "the GPU failed to remap a memory row: it has run out of spare rows and keeps "
        "hitting the same faulty memory",
        "a GPU whose row remapping failed keeps faulty memory in use",
        "take GPU {gpu} out of service (gpus.devices without it) and have it replaced: a "
        "remapping failure does not heal with a reset",
        "nvml.h nvmlDeviceGetRemappedRows failureOccurred (Ampere and newer); DCGM dcgm_errors.h "
        "DCGM_FR_ROW_REMAP_FAILURE"},
    HealthThreshold{
        HealthCheck::row_remap_pending, "gpu-row-remap-pending", false, 0,
        "memory rows are marked for remapping, which takes effect only at the next GPU reset",
        "pending row remappings take effect only at a GPU reset",
        "reset the GPU when nothing runs on it (`nvidia-smi -r -i {gpu}`), or reboot",
        "nvml.h nvmlDeviceGetRemappedRows isPending (Ampere and newer); DCGM dcgm_errors.h "
        "DCGM_FR_PENDING_ROW_REMAP"},
    HealthThreshold{
        HealthCheck::retired_pages_pending, "gpu-retired-pages-pending", false, 0,
        "memory pages are marked for retirement, which takes effect only when the driver "
        "reloads",
        "pending page retirements take effect only when the driver reloads",
        "reset the GPU when nothing runs on it (`nvidia-smi -r -i {gpu}`), or reboot",
        "nvml.h nvmlDeviceGetRetiredPagesPendingStatus (before Ampere; Ampere and newer remap "
        "rows instead); DCGM dcgm_errors.h DCGM_FR_PENDING_PAGE_RETIREMENTS"},
    HealthThreshold{
        HealthCheck::persistence_off, "gpu-persistence-off", false, 0,
        "persistence mode is off: without a client holding it the driver tears the GPU's "
        "state down and rebuilds it, seconds lost in cuInit at every start, and volatile "
        "ECC counters reset with it",
        "a GPU serving an engine keeps its driver state loaded (persistence mode)",
        "run the persistence daemon: `systemctl enable --now nvidia-persistenced` (or "
        "`nvidia-smi -pm 1` until the next boot)",
        "nvml.h nvmlDeviceGetPersistenceMode, NVML_VOLATILE_ECC's note on driver unloads; "
        "DCGM dcgm_errors.h DCGM_FR_PERSISTENCE_MODE"},
};

// kXidCatalogSource: each row's meaning and its resolution bucket (RESTART_BM: reboot,
// RESET_GPU: reset the GPU, RESTART_APP: the GPU is fine, the process on it is not). Xids that are
// an application's own fault (13, 31, 43, 45) say nothing about the next start and are left out.
constexpr std::array kXidRows{
    XidRow{48, "double-bit ECC error", true,
           "an uncorrectable memory error; the process that hit it was killed",
           "reset the GPU (`nvidia-smi -r -i {gpu}`) or reboot; if it recurs, the GPU needs "
           "service"},
    XidRow{63, "ECC page retirement or row remapping recorded", false,
           "a faulty memory row or page was recorded for remapping; it takes effect at the next "
           "GPU reset",
           "reset the GPU when nothing runs on it (`nvidia-smi -r -i {gpu}`), or reboot"},
    XidRow{64, "ECC page retirement or row remapping failure", true,
           "recording a faulty memory row or page failed: the faulty memory stays in use",
           "reset the GPU or reboot; if it recurs, take the GPU out of service"},
    XidRow{74, "NVLink error", true,
           "an NVLink connection of this GPU failed; collectives over it hang or fail",
           "reset the GPUs on that NVLink (or reboot); if it recurs, have the NVLink/NVSwitch "
           "hardware checked"},
    XidRow{79, "GPU has fallen off the bus", true,
           "the GPU stopped answering on PCIe: the driver no longer reaches it",
           "reboot the node (a reset cannot reach a GPU off the bus); if it recurs, have the "
           "GPU, its slot, power and cooling checked"},
    XidRow{94, "contained ECC error", false,
           "an uncorrectable memory error the GPU contained: the process that hit it was killed, "
           "other processes were not affected",
           "restart the engine; reset the GPU (`nvidia-smi -r -i {gpu}`) when convenient so the "
           "faulty row is remapped"},
    XidRow{95, "uncontained ECC error", true,
           "an uncorrectable memory error the GPU could not contain: every process on this GPU "
           "was affected",
           "reset the GPU (`nvidia-smi -r -i {gpu}` with no process on it) or reboot before "
           "starting anything on it"},
    XidRow{119, "GSP RPC timeout", true, "the GPU System Processor stopped answering the driver",
           "reset the GPU or reboot; if it recurs, update the driver"},
    XidRow{120, "GSP error", true, "the GPU System Processor reported an error",
           "reset the GPU or reboot; if it recurs, update the driver"},
};

}  // namespace

std::string_view fabric_state_name(FabricState state) {
  return name_in(kFabricStateNames, state, "unknown");
}

std::optional<FabricState> fabric_state_named(std::string_view name) {
  return value_in(kFabricStateNames, name);
}

const HealthThreshold& health_threshold(HealthCheck check) {
  return *std::ranges::find(kHealthThresholds, check, &HealthThreshold::check);
}

std::span<const XidRow> xid_rows() {
  return kXidRows;
}

const XidRow* xid_row(int xid) {
  auto found = std::ranges::find(kXidRows, xid, &XidRow::xid);
  return found == kXidRows.end() ? nullptr : &*found;
}

}  // namespace gl
