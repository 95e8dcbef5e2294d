# SPDX-License-Identifier: Apache-2.0
"""Mock SGLang for gpulaunch tests: `sglang serve` and `python -m sglang.launch_server`."""

from sglang.version import __version__  # noqa: F401
