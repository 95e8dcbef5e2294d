# SPDX-License-Identifier: Apache-2.0
"""Mock SGLang for gpulaunch tests. Only `python -m sglang.launch_server` is provided."""

__version__ = "0.0.0+mock"
