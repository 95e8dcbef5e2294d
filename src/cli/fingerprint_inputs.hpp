#pragma once
// Stand-in until the node facts probe (src/facts/) lands: the fingerprint inputs read from the
// profile and the filesystem. At merge, fingerprint_inputs_for is replaced by the probe's facts.

#include "caches/fingerprint.hpp"
#include "profile/profile.hpp"

namespace gl {

// Toolkit path from the profile and its version from version.json or cuda.h; the driver from
// /sys/module/nvidia/version; archs from gpus.arch; package versions from the venv's
// *.dist-info directories. Whatever cannot be read stays "" (unknown).
FingerprintInputs fingerprint_inputs_for(const Profile& profile);

}  // namespace gl
