// SPDX-License-Identifier: Apache-2.0
#pragma once
// The node's kernel side that NCCL depends on, read as files under the node's root (so fixture
// roots are probed like the live system): InfiniBand devices and the peer-memory module that
// GPUDirect RDMA needs, and the size of /dev/shm.

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

// /sys/class/infiniband's entries; the peer-memory modules in /proc/modules and the files NCCL
// tests (catalog/node_requirements).
InfinibandFact probe_infiniband(const NodeFs& node);

// statvfs(2) of /dev/shm under the root: its whole size, which bounds NCCL's segments.
ShmFact probe_shm(const NodeFs& node);

}  // namespace gl
