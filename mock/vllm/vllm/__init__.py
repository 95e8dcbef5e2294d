"""gpulaunch's mock of vLLM (see mock/README.md)."""

from vllm.version import __version__  # noqa: F401
