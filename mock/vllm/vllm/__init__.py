# SPDX-License-Identifier: Apache-2.0
"""gpulaunch's mock of vLLM (see mock/README.md)."""

from vllm.version import __version__  # noqa: F401
