# SPDX-License-Identifier: Apache-2.0
"""Mock of `python -m sglang.launch_server` (and, through sglang/cli/main.py, `sglang serve`) for
gpulaunch tests.

Pure standard library. Accepts the launch_server flags gpulaunch emits, rejects anything else the
way argparse does (exit 2, usage on stderr), records the argv it was given, prints SGLang-like
start-up lines and serves /health, /health_generate, /generate, /v1/models, /v1/completions,
/get_model_info and, with --enable-metrics, /metrics (mock_scheduler's token counter and running
requests under SGLang's names). Behaviour is chosen by environment only (real SGLang would reject a
mock flag); mock_scheduler's MOCK_WEDGE_*, MOCK_SLOW_SECONDS, MOCK_BACKGROUND_REQUESTS,
MOCK_GENERATE_FAILS_FOR, MOCK_JIT_GROW_* (a silent JIT build after the weights) and MOCK_SIGTERM
(SIGTERM drains in-flight requests without a bound, as SGLang's sigterm_watchdog does) apply too:

  MOCK_SGLANG_ARGV_FILE      where to record argv (default $HOME/mock-sglang-argv.json)
  MOCK_SGLANG_LOAD_SECONDS   fake weight-loading time (default 4)
  MOCK_SGLANG_PROGRESS       lines (default): one "Loading safetensors checkpoint shards" line per
                             shard; tqdm: current SGLang's loader, "Multi-thread loading shards"
                             on stderr, each update led by a carriage return, as tqdm writes it
  MOCK_SGLANG_MODE           normal | leak | cuda-oom | hang | crash | never-ready
  MOCK_SGLANG_MODE_FILE      file whose (stripped) content, when non-empty, overrides the mode
  MOCK_SGLANG_CRASH_AFTER    seconds after start before `crash` dies (default 3)
  MOCK_SGLANG_CRASH_EXIT     exit code for `crash` instead of SIGSEGV
  MOCK_SGLANG_HANG_AFTER     seconds after ready before `hang` stops answering (default 1)
  MOCK_SGLANG_READY_FILE     file to write the time /health turned 200 into (benchmarks)
  MOCK_OOM_ABOVE             `cuda-oom` at every start whose --mem-fraction-static (unset: 0.95,
                             SGLang's own share where the GPU is unknown) is above this
  MOCK_SGLANG_LEAK_MIB       MiB allocated per `leak` step (default 50)
  MOCK_SGLANG_LEAK_INTERVAL  seconds between `leak` steps (default 0.2)
  MOCK_SGLANG_HOSTILE_PLAN   `hostile`: JSON file listing what to plant ({"path", "kind":
                             symlink | fifo | hardlink | garbage, "target"}), before loading
  MOCK_SGLANG_HOSTILE_REPORT `hostile`: where to write what each plant did (default
                             $HOME/mock-sglang-hostile.json)
  MOCK_SGLANG_FLOOD_BYTES    `hostile`: bytes printed without a newline before it crashes
                             (default 3 MiB)
  MOCK_SGLANG_POISONED_CACHE 1: after the weights, load a "compiled graph" from
                             $TORCHINDUCTOR_CACHE_DIR as torch.compile does; while the marker
                             file fxgraph/mock/POISONED exists there, the module it loads from
                             the cache raises, so the uncaught traceback's last frame is inside
                             the cache (vLLM #24915), and the engine exits 1
"""

import argparse
import datetime
import json
import os
import signal
import sys
import tempfile
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mock_scheduler import (PROMETHEUS_TEXT, NotReady, install_sigterm, oom_above, prometheus,
                            release, scheduler_for, send_body, silent_jit_build)
from sglang.version import __version__

MODES = ("normal", "leak", "cuda-oom", "hang", "crash", "never-ready", "hostile")
SHARDS = 8


# python/sglang/srt/server_args.py: the phase-split CUDA-graph flags came with sgl-project/sglang
# #23906, in v0.5.15 (the first release known to hold it: src/catalog/engines.cpp); before it
# --cuda-graph-max-bs is the flag, after it a deprecated alias.
PHASE_SPLIT_GRAPHS = (0, 5, 15)


def build_parser():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    add = parser.add_argument
    add("--model-path", type=str, required=True)
    add("--tensor-parallel-size", "--tp-size", type=int, default=1)
    add("--pipeline-parallel-size", "--pp-size", type=int, default=1)
    add("--expert-parallel-size", "--ep-size", type=int, default=1)
    add("--data-parallel-size", "--dp-size", type=int, default=1)
    add("--enable-dp-attention", action="store_true")
    add("--host", type=str, default="127.0.0.1")
    add("--port", type=int, default=30000)
    add("--served-model-name", type=str, default=None)
    add("--revision", type=str, default=None)
    add("--nnodes", type=int, default=1)
    add("--node-rank", type=int, default=0)
    add("--dist-init-addr", type=str, default=None)
    add("--mem-fraction-static", type=float, default=None)
    add("--max-running-requests", type=int, default=None)
    # The installed release's flags only: an older SGLang exits 2, "unrecognized arguments:
    # --cuda-graph-max-bs-decode 80", as argparse words it.
    if release(__version__) >= PHASE_SPLIT_GRAPHS:
        add("--cuda-graph-max-bs-decode", "--cuda-graph-max-bs", type=int, default=None)
    else:
        add("--cuda-graph-max-bs", type=int, default=None, dest="cuda_graph_max_bs_decode")
    add("--speculative-algorithm", type=str, default=None)
    add("--speculative-draft-model-path", type=str, default=None)
    add("--speculative-num-steps", type=int, default=None)
    add("--speculative-eagle-topk", type=int, default=None)
    add("--speculative-num-draft-tokens", type=int, default=None)
    add("--trust-remote-code", action="store_true")
    add("--enable-metrics", action="store_true")
    return parser


def log(message, tp=True):
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    prefix = f"[{now} TP0]" if tp else f"[{now}]"
    print(f"{prefix} {message}", flush=True)


def raw(message, stream=None):
    print(message, file=stream or sys.stdout, flush=True)


def record_argv(recorded=None):
    path = os.environ.get("MOCK_SGLANG_ARGV_FILE")
    if not path:
        path = os.path.join(os.environ.get("HOME") or "/tmp", "mock-sglang-argv.json")
    # sys.orig_argv is exactly what exec() received: interpreter, -m, module, flags. The console
    # script passes its own (script, serve, flags).
    argv = list(recorded or getattr(sys, "orig_argv", [sys.executable] + sys.argv))
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".mock-sglang-argv.", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(argv, f, ensure_ascii=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as error:
        raw(f"mock-sglang: cannot record argv to {path}: {error}", sys.stderr)


def choose_mode():
    mode = os.environ.get("MOCK_SGLANG_MODE", "").strip() or "normal"
    mode_file = os.environ.get("MOCK_SGLANG_MODE_FILE")
    if mode_file:
        try:
            with open(mode_file, encoding="utf-8") as f:
                mode = f.read().strip() or mode
        except OSError:
            pass
    if mode not in MODES:
        raw(f"mock-sglang: unknown MOCK_SGLANG_MODE {mode!r}; one of {', '.join(MODES)}", sys.stderr)
        sys.exit(2)
    return mode


def env_float(name, default):
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return float(default)


# The upgrade gate's mock releases (a suffix of the version, e.g. 0.5.6+mock.gibberish):
# "gibberish" answers with scrambled words, "slow5x" steps five times slower, "flaky" answers
# every third completion with a 503 (the request succeeds when sent again).
def upgrade_flaw(name):
    return name in __version__.split("+", 1)[-1].split(".")


def answer_text(prompt, tokens):
    """A greedy answer: the same words for the same prompt, one word a token."""
    words = [f"w{sum(map(ord, str(prompt))) % 97 + i}" for i in range(max(1, tokens))]
    if upgrade_flaw("gibberish"):
        words = [w[::-1] + "q" for w in reversed(words)]
    return " " + " ".join(words)


class State:
    def __init__(self, args):
        self.args = args
        self.ready = threading.Event()
        self.hung = threading.Event()
        self.name = args.served_model_name or args.model_path
        # --max-running-requests caps the running batch; the rest wait in the queue.
        self.scheduler = scheduler_for(args.max_running_requests)
        if upgrade_flaw("slow5x"):
            self.scheduler.step *= 5
        self.completions = 0
        self.completions_lock = threading.Lock()

    def count_completion(self):
        with self.completions_lock:
            self.completions += 1
            return self.completions


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "uvicorn"
        sys_version = ""

        def log_message(self, fmt, *args):  # uvicorn-style access log on stdout
            log(f'INFO:     {self.client_address[0]}:{self.client_address[1]} - "{self.requestline}" '
                f"{args[1] if len(args) > 1 else ''}", tp=False)

        def reply(self, status, body):
            send_body(self, status, body, "application/json" if body != b"" else "text/plain")

        def reply_metrics(self):
            # Names as SGLang's srt/metrics/collector.py (00ae9c1) registers them:
            # SchedulerMetricsCollector's gauges sglang:num_running_reqs and sglang:num_queue_reqs
            # and counter sglang:realtime_tokens_total (one sample per mode, added to as the
            # scheduler runs),
            # TokenizerMetricsCollector's sglang:generation_tokens_total (added to when a
            # request finishes); labels model_name (and the rank's).
            model = {"model_name": state.name}
            rank = {**model, "tp_rank": "0", "pp_rank": "0"}
            tokens, finished, admitted = state.scheduler.counters()
            running, queued = state.scheduler.processing_deferred()
            help_realtime = "Total number of tokens processed (updated on each log interval)."
            data = prometheus([
                ("sglang:num_running_reqs", "gauge", "The number of running requests.", rank,
                 running),
                ("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.",
                 rank, queued),
                ("sglang:generation_tokens_total", "counter",
                 "Number of generation tokens processed.", model, finished),
                ("sglang:realtime_tokens_total", "counter", help_realtime,
                 {**rank, "mode": "prefill_compute"}, admitted),
                ("sglang:realtime_tokens_total", "counter", help_realtime,
                 {**rank, "mode": "prefill_cache"}, 0),
                ("sglang:realtime_tokens_total", "counter", help_realtime,
                 {**rank, "mode": "decode"}, tokens),
            ])
            send_body(self, 200, data, PROMETHEUS_TEXT)

        def wedge(self):
            if state.hung.is_set():
                threading.Event().wait()  # never returns: a wedged event loop

        def do_GET(self):
            self.wedge()
            path = self.path.split("?", 1)[0]
            if path == "/health":
                # As SGLang's /health with SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=false (and
                # before 0.4.8): the HTTP server is up, whatever the scheduler does.
                self.reply(200 if state.ready.is_set() else 503, b"")
            elif path == "/health_generate":
                # http_server.py health_generate: one token, or any scheduler output, within
                # SGLANG_HEALTH_CHECK_TIMEOUT (20 s), else 503.
                timeout = env_float("SGLANG_HEALTH_CHECK_TIMEOUT", 20)
                ok = state.ready.is_set() and state.scheduler.health_generate(timeout)
                self.reply(200 if ok else 503, b"")
            elif path == "/metrics" and state.args.enable_metrics:
                self.reply_metrics()
            elif path == "/v1/models":
                # Real SGLang starts its HTTP server once the scheduler is ready, so no model is
                # listed before then (compile_deep_gemm waits on this answer).
                if not state.ready.is_set():
                    self.reply(503, {"object": "error", "message": "Server is not ready",
                                     "code": 503})
                    return
                self.reply(200, {"object": "list", "data": [{
                    "id": state.name, "object": "model", "created": int(time.time()),
                    "owned_by": "sglang", "root": state.name, "max_model_len": 131072}]})
            elif path == "/get_model_info":
                self.reply(200, {"model_path": state.args.model_path,
                                 "tokenizer_path": state.args.model_path,
                                 "is_generation": True})
            else:
                self.reply(404, {"detail": "Not Found"})

        def do_POST(self):
            self.wedge()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            if path not in ("/v1/completions", "/generate"):
                self.reply(404, {"detail": "Not Found"})
                return
            if not state.ready.is_set():
                self.reply(503, {"object": "error", "message": "Server is not ready", "code": 503})
                return
            try:
                request = json.loads(body or b"{}")
            except ValueError:
                self.reply(400, {"object": "error", "message": "Invalid JSON", "code": 400})
                return
            if path == "/generate":
                self.native_generate(request)
                return
            prompt = request.get("prompt", "")
            prompt_tokens = len(str(prompt).split())
            if upgrade_flaw("flaky") and state.count_completion() % 3 == 1:
                self.reply(503, {"object": "error", "message": "mock: flaky", "code": 503})
                return
            try:
                completion = state.scheduler.generate(request.get("max_tokens") or 16)
            except NotReady as why:
                self.reply(503, {"object": "error", "message": str(why), "code": 503})
                return
            self.reply(200, {
                "id": f"cmpl-mock{int(time.time() * 1000)}", "object": "text_completion",
                "created": int(time.time()), "model": request.get("model") or state.name,
                "choices": [{"index": 0, "text": answer_text(prompt, completion), "logprobs": None,
                             "finish_reason": "length", "matched_stop": None}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                          "total_tokens": prompt_tokens + completion}})

        def native_generate(self, request):
            # SGLang's native API (io_struct.py GenerateReqInput): text or input_ids, and
            # sampling_params.max_new_tokens (default 128).
            if request.get("text") is None and request.get("input_ids") is None:
                self.reply(400, {"object": "error", "code": 400, "message":
                                 "Either text, input_ids or input_embeds should be provided."})
                return
            params = request.get("sampling_params") or {}
            started = time.monotonic()
            try:
                completion = state.scheduler.generate(params.get("max_new_tokens") or 128)
            except NotReady as why:
                self.reply(503, {"object": "error", "message": str(why), "code": 503})
                return
            prompt = request.get("input_ids") or str(request.get("text")).split()
            self.reply(200, {"text": " mock", "meta_info": {
                "id": f"mock{int(time.time() * 1000)}",
                "finish_reason": {"type": "length", "length": completion},
                "prompt_tokens": len(prompt), "completion_tokens": completion, "cached_tokens": 0,
                "e2e_latency": time.monotonic() - started}})

    return Handler


def progress(done, total, elapsed):
    percent = int(100 * done / total)
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 else 0.0
    mmss = lambda s: f"{int(s) // 60:02d}:{int(s) % 60:02d}"
    eta, speed = (f"{mmss(left)}", f"{rate:5.2f}it/s") if done else ("?", "?it/s")
    bar = f"{percent:3d}% Completed | {done}/{total} [{mmss(elapsed)}<{eta}, {speed}]"
    if os.environ.get("MOCK_SGLANG_PROGRESS", "lines") == "tqdm":
        # tqdm's status printer: "\r" + the bar, no newline until the bar closes (stderr).
        sys.stderr.write(f"\rMulti-thread loading shards: {bar}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()
        return
    raw(f"Loading safetensors checkpoint shards: {bar}")


CUDA_OOM = """Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 2325, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 312, in __init__
    self.tp_worker = TpWorkerClass(
  File "/usr/lib/python3/dist-packages/sglang/srt/managers/tp_worker.py", line 81, in __init__
    self.model_runner = ModelRunner(
  File "/usr/lib/python3/dist-packages/sglang/srt/model_executor/model_runner.py", line 235, in __init__
    self.initialize(min_per_gpu_memory)
  File "/usr/lib/python3/dist-packages/sglang/srt/model_executor/model_runner.py", line 285, in initialize
    self.load_model()
  File "/usr/lib/python3/dist-packages/sglang/srt/model_executor/model_runner.py", line 690, in load_model
    self.model = get_model(
  File "/usr/lib/python3/dist-packages/sglang/srt/model_loader/loader.py", line 560, in load_model
    model = _initialize_model(
  File "/usr/lib/python3/dist-packages/torch/utils/_device.py", line 104, in __torch_function__
    return func(*args, **kwargs)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.81 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 138.68 GiB memory in use. Of the allocated memory 136.90 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
"""


def crash_timer(started):
    delay = env_float("MOCK_SGLANG_CRASH_AFTER", 3)

    def die():
        time.sleep(max(0.0, started + delay - time.monotonic()))
        code = os.environ.get("MOCK_SGLANG_CRASH_EXIT")
        if code:
            raw("mock-sglang: crashing with exit code " + code, sys.stderr)
            os._exit(int(code))
        raw("Fatal Python error: Segmentation fault\n\nThread 0x00007f0000000000 (most recent call "
            "first):\n  File \"/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py\", "
            "line 1011 in event_loop_overlap", sys.stderr)
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(1)
        os._exit(139)

    threading.Thread(target=die, daemon=True).start()


def plant(entry):
    """One attack on a path a root helper may touch: replace it with something root must not
    follow, block on or trust. Returns what happened, for the test to read."""
    path, kind, target = entry["path"], entry["kind"], entry.get("target", "")
    try:
        if os.path.lexists(path) and not os.path.isdir(path) or os.path.islink(path):
            os.unlink(path)
        elif os.path.isdir(path):
            os.rename(path, path + ".moved-by-engine")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == "symlink":
            os.symlink(target, path)
        elif kind == "fifo":
            os.mkfifo(path, 0o666)
        elif kind == "hardlink":
            os.link(target, path)
        elif kind == "garbage":
            with open(path, "wb") as out:
                out.write(b'{"consecutive_failures": "x", "gpu_level": [1]}\n\x00\xff garbage')
        else:
            return f"unknown kind {kind!r}"
        return "planted"
    except OSError as error:
        return f"refused: {error.strerror}"


def hostile_start():
    plan_file = os.environ.get("MOCK_SGLANG_HOSTILE_PLAN")
    plan = []
    if plan_file:
        with open(plan_file) as source:
            plan = json.load(source)
    report = {entry["path"]: plant(entry) for entry in plan}
    report_file = os.environ.get("MOCK_SGLANG_HOSTILE_REPORT") or os.path.join(
        os.environ.get("HOME", "/tmp"), "mock-sglang-hostile.json")
    try:
        with open(report_file, "w") as out:
            json.dump(report, out, indent=1)
    except OSError as error:
        raw(f"mock-sglang: cannot write the hostile report: {error}", sys.stderr)
    # Output the engine controls: a line that looks like a CUDA OOM, then one endless line.
    raw("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. "
        "(planted by a hostile engine)")
    flood = int(env_float("MOCK_SGLANG_FLOOD_BYTES", 3 * 1024 * 1024))
    chunk = b"A" * 65536
    written = 0
    while written < flood:
        piece = chunk[: min(len(chunk), flood - written)]
        sys.stdout.buffer.write(piece)
        written += len(piece)
    sys.stdout.buffer.write(b"\n")
    sys.stdout.flush()
    raw("mock-sglang: flood done, crashing")
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(1)
    os._exit(139)


def load_compiled_graph():
    """MOCK_SGLANG_POISONED_CACHE: import a module from the inductor cache and run it, as
    torch._inductor's PyCodeCache does with a cached FX graph's output code."""
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if os.environ.get("MOCK_SGLANG_POISONED_CACHE") != "1" or not cache:
        return
    graphs = os.path.join(cache, "fxgraph", "mock")
    if not os.path.exists(os.path.join(graphs, "POISONED")):
        return
    module_path = os.path.join(graphs, "cmockgraph.py")
    with open(module_path, "w") as out:
        out.write("def call(args):\n"
                  "    raise RuntimeError('Triton Error [CUDA]: device kernel image is invalid')\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("cmockgraph", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.call([])  # uncaught: Python prints the traceback and exits 1


def main(argv=None, recorded=None):
    record_argv(recorded)
    args = build_parser().parse_args(argv)
    mode = choose_mode()
    started = time.monotonic()
    load_seconds = max(0.0, env_float("MOCK_SGLANG_LOAD_SECONDS", 4))

    state = State(args)
    # SGLang's drain (tokenizer_manager.py sigterm_watchdog): no bound of its own.
    install_sigterm(lambda: state.scheduler, None, lambda message: log(message, tp=False),
                    refuse_new=False)
    try:
        server = ThreadingHTTPServer((args.host, args.port), make_handler(state))
    except OSError as error:
        raw(f"ERROR:    [Errno {error.errno}] error while attempting to bind on address "
            f"('{args.host}', {args.port}): {error.strerror}", sys.stderr)
        return 1
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()

    if mode == "hostile":
        signal.signal(signal.SIGSEGV, signal.SIG_DFL)
        hostile_start()
    if mode == "crash":
        signal.signal(signal.SIGSEGV, signal.SIG_DFL)  # only the main thread may set handlers
        crash_timer(started)

    log(f"server_args=ServerArgs(model_path='{args.model_path}', tokenizer_path='{args.model_path}', "
        f"host='{args.host}', port={args.port}, tp_size={args.tensor_parallel_size}, "
        f"pp_size={args.pipeline_parallel_size}, ep_size={args.expert_parallel_size}, "
        f"dp_size={args.data_parallel_size}, served_model_name='{state.name}', "
        f"mem_fraction_static={args.mem_fraction_static}, trust_remote_code={args.trust_remote_code})",
        tp=False)
    log("Init torch distributed begin.")
    log("Init torch distributed ends. mem usage=0.00 GB")
    log("Load weight begin. avail mem=138.69 GB")
    step = load_seconds / SHARDS
    t0 = time.monotonic()
    progress(0, SHARDS, 0.0)
    for shard in range(1, SHARDS + 1):
        time.sleep(step)
        progress(shard, SHARDS, time.monotonic() - t0)
        if (mode == "cuda-oom" or oom_above(args.mem_fraction_static, 0.95)) and \
                shard == SHARDS // 2:
            raw(CUDA_OOM, sys.stderr)
            log("Scheduler hit an exception: " + CUDA_OOM.rstrip(), tp=True)
            return 1
    log("Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=123.52 GB, "
        "mem usage=15.17 GB.")
    load_compiled_graph()
    silent_jit_build()
    log("KV Cache is allocated. #tokens: 1000000, K size: 45.78 GB, V size: 45.78 GB")
    log("Memory pool end. avail mem=30.40 GB")
    log("Capture cuda graph begin. This can take up to several minutes. avail mem=30.10 GB")
    if mode == "never-ready":
        threading.Event().wait()
    log("Capture cuda graph end. Time elapsed: 0.01 s. mem usage=0.42 GB. avail mem=29.68 GB.")
    log(f"max_total_num_tokens=1000000, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        f"max_running_requests={args.max_running_requests or 4096}, context_len=131072, "
        f"available_gpu_mem=29.68 GB")
    log(f"INFO:     Started server process [{os.getpid()}]", tp=False)
    log("INFO:     Waiting for application startup.", tp=False)
    log("INFO:     Application startup complete.", tp=False)
    log(f"INFO:     Uvicorn running on http://{args.host}:{args.port} (Press CTRL+C to quit)", tp=False)
    state.ready.set()
    state.scheduler.set_ready()
    # For benchmarks: the moment /health starts answering 200 (CLOCK_REALTIME seconds).
    ready_file = os.environ.get("MOCK_SGLANG_READY_FILE")
    if ready_file:
        with open(ready_file, "w") as out:
            out.write(f"{time.time():.6f}\n")
    log("The server is fired up and ready to roll!", tp=False)

    if mode == "hang":
        time.sleep(env_float("MOCK_SGLANG_HANG_AFTER", 1))
        log("mock-sglang: wedging the HTTP server (MOCK_SGLANG_MODE=hang)", tp=False)
        state.hung.set()
    elif mode == "leak":
        chunk = int(env_float("MOCK_SGLANG_LEAK_MIB", 50) * 1024 * 1024)
        interval = env_float("MOCK_SGLANG_LEAK_INTERVAL", 0.2)
        hoard = []
        while True:
            hoard.append(b"\x01" * chunk)  # filled, so every page is touched
            log(f"mock-sglang: leaked {len(hoard) * chunk >> 20} MiB", tp=False)
            time.sleep(interval)
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    # Real SGLang's launch_server.py (sgl-project/sglang 046a9e4) warns so under __main__.
    warnings.warn(
        "'python -m sglang.launch_server' is still supported, but "
        "'sglang serve' is the recommended entrypoint.\n"
        "  Example: sglang serve --model-path <model> [options]",
        UserWarning,
        stacklevel=1,
    )
    sys.exit(main())
