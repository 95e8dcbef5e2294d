# SPDX-License-Identifier: Apache-2.0
"""The engine of tests/integration/real_torch_test.cpp: real PyTorch and the real CUDA toolkit,
run by `gpulaunch up` as a `command` engine from a venv made with --system-site-packages.

Each start it
- shares a tensor with a spawned process over torch.multiprocessing with the file_descriptor
  strategy, and sees the child's in-place write (shared memory, not a copy);
- loads a C++ extension with torch.utils.cpp_extension.load, which builds it into the unit's
  TORCH_EXTENSIONS_DIR unless a build is already there (reused);
- compiles a kernel for sm_120 with the nvcc on the unit's PATH (plain nvcc -arch=sm_120 -c);
- leaves an entry in the Triton and TileLang caches, which a torch change must not clear;
then writes what it saw to $HOME/real-torch.json and answers GET /health with 200.
Usage: engine.py --port PORT
"""

import http.server
import json
import os
import shutil
import subprocess
import sys

EXTENSION = "gl_twice"
EXTENSION_SOURCE = (
    "#include <pybind11/pybind11.h>\n"
    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
    '  m.def("twice", [](long x) { return 2 * x; });\n'
    "}\n"
)
KERNEL_SOURCE = "__global__ void twice(int* x) { x[threadIdx.x] *= 2; }\n"


def _child(queue, done):
    tensor = queue.get()
    tensor.add_(41)  # in place: the parent sees it only if the storage is shared
    done.put(True)


def share_tensor(torch):
    import torch.multiprocessing as mp

    mp.set_sharing_strategy("file_descriptor")
    context = mp.get_context("spawn")
    queue, done = context.Queue(), context.Queue()
    child = context.Process(target=_child, args=(queue, done))
    child.start()
    tensor = torch.ones(8, dtype=torch.int64)
    queue.put(tensor)
    done.get(timeout=60)
    child.join(60)
    return {
        "strategy": mp.get_sharing_strategy(),
        "child_exit": child.exitcode,
        "seen_by_parent": tensor.tolist(),
    }


def build_extension(home):
    import torch.utils.cpp_extension as cpp_extension

    root = os.environ["TORCH_EXTENSIONS_DIR"]
    built_before = os.path.exists(os.path.join(root, EXTENSION, EXTENSION + ".so"))
    source = os.path.join(home, EXTENSION + ".cpp")
    with open(source, "w") as out:
        out.write(EXTENSION_SOURCE)
    module = cpp_extension.load(EXTENSION, [source])
    return {
        "directory": os.path.dirname(module.__file__),
        "answer": module.twice(21),
        "built": not built_before,
    }


def main():
    port = int(sys.argv[sys.argv.index("--port") + 1])
    home = os.environ["HOME"]
    nvcc = shutil.which("nvcc")
    kernel = os.path.join(home, "kernel.cu")
    with open(kernel, "w") as out:
        out.write(KERNEL_SOURCE)
    compile_kernel = subprocess.Popen(
        [nvcc, "-arch=sm_120", "-c", kernel, "-o", os.path.join(home, "kernel.o")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    import torch

    report = {
        "torch_version": torch.__version__,
        "torch_file": torch.__file__,
        "torch_cuda_arch_list": os.environ.get("TORCH_CUDA_ARCH_LIST"),
        "sharing": share_tensor(torch),
        "extension": build_extension(home),
    }
    output, _ = compile_kernel.communicate(timeout=120)
    report["kernel"] = {
        "nvcc": nvcc,
        "status": compile_kernel.returncode,
        "output": output,
        "object_bytes": os.path.getsize(os.path.join(home, "kernel.o"))
        if compile_kernel.returncode == 0 else 0,
    }
    for variable in ("TRITON_CACHE_DIR", "TILELANG_CACHE_DIR"):
        os.makedirs(os.environ[variable], exist_ok=True)
        with open(os.path.join(os.environ[variable], "entry-from-first-start"), "a") as out:
            out.write("kept across a torch change\n")
    with open(os.path.join(home, "real-torch.json"), "w") as out:
        json.dump(report, out)
    print("real torch engine serving", json.dumps(report), flush=True)

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Health).serve_forever()


if __name__ == "__main__":
    main()
