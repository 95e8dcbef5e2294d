# SPDX-License-Identifier: Apache-2.0
"""Mock SGLang for gpulaunch tests: `sglang serve` and `python -m sglang.launch_server`."""

__version__ = "0.5.6+mock"
