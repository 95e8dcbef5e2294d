# SPDX-License-Identifier: Apache-2.0
"""Mock of `python -m sglang.compile_deep_gemm` for gpulaunch tests, after sgl-project/sglang
python/sglang/compile_deep_gemm.py (commit 06c48ca): it takes every server flag launch_server
takes plus --timeout (default 3600 s), rejects anything else as argparse does (exit 2), starts its
own server (this mock's launch_server, in a spawned process as upstream does) at the arguments'
host and port with SGLANG_ENABLE_JIT_DEEPGEMM forced on, waits for /v1/models, sends one /generate
with input_ids [0, 1, 2, 3], prints the line below, waits, and kills its server. A server not ready
within --timeout raises TimeoutError (a traceback, exit 1).

The kernels it builds are the mock server's first-use JIT build (mock_scheduler.silent_jit_build):
with MOCK_JIT_GROW_SECONDS and MOCK_JIT_CACHE_VARIABLE=DG_JIT_CACHE_DIR, the objects and their
record land in the DeepGEMM cache, and a later start that finds them compiles nothing.

  MOCK_SGLANG_COMPILE_LINGER  seconds it waits after the line before it kills its server
                              (upstream sleeps 10; tests set less)
"""

import json
import multiprocessing
import os
import sys
import time
import urllib.error
import urllib.request

from sglang import launch_server

FINISHED = "DeepGEMM Kernels compilation finished successfully."


def server_address(host, port):
    # The server listens on the arguments' host; a wildcard is reached on loopback.
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def wait_until_ready(base, timeout, server):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.is_alive():
            raise RuntimeError(f"The server died with exit code {server.exitcode}.")
        try:
            with urllib.request.urlopen(base + "/v1/models", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1)
    raise TimeoutError("Timeout while waiting for the server to be ready.")


def send_one_request(base):
    body = json.dumps({"input_ids": [0, 1, 2, 3],
                       "sampling_params": {"max_new_tokens": 8, "temperature": 0}}).encode()
    request = urllib.request.Request(base + "/generate", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as answer:
        if answer.status != 200:
            raise RuntimeError(f"Sync request failed: {answer.read()!r}")


def main(argv=None):
    parser = launch_server.build_parser()
    parser.add_argument("--timeout", type=int, default=3600)
    args = parser.parse_args(argv)
    raw = list(sys.argv[1:] if argv is None else argv)
    server_argv = []
    skip = False
    for word in raw:  # the server's flags: everything but the step's own --timeout
        if skip:
            skip = False
            continue
        if word == "--timeout":
            skip = True
            continue
        if word.startswith("--timeout="):
            continue
        server_argv.append(word)
    os.environ["SGLANG_ENABLE_JIT_DEEPGEMM"] = "1"
    server = multiprocessing.get_context("spawn").Process(target=launch_server.main,
                                                          args=(server_argv,))
    server.start()
    try:
        base = server_address(args.host, args.port)
        wait_until_ready(base, args.timeout, server)
        send_one_request(base)
        print("\n" + FINISHED, flush=True)
        time.sleep(launch_server.env_float("MOCK_SGLANG_COMPILE_LINGER", 10))
    finally:
        if server.is_alive():
            server.kill()
        server.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
