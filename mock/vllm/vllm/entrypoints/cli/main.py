# SPDX-License-Identifier: Apache-2.0
"""Mock of vLLM's `vllm serve` (console script vllm = vllm.entrypoints.cli.main:main) for
gpulaunch tests.

Pure standard library. Accepts vLLM's real serve flags (those gpulaunch emits and the common ones,
spelled as vllm/engine/arg_utils.py and vllm/entrypoints/openai/cli_args.py spell them, short
forms included), refuses anything else the way argparse does (exit 2, "unrecognized arguments"),
records the argv it was given and, like vLLM:

- rank 0 (no --headless) serves /health, /v1/models and /v1/completions on --host/--port once its
  group has formed: with --nnodes N it listens on --master-port (torch.distributed's store) and
  waits for N - 1 headless ranks; with --data-parallel-size-local L < --data-parallel-size D it
  listens on --data-parallel-rpc-port and waits for D - L remote engine cores;
- a --headless rank serves no HTTP: it connects to rank 0's master port (--node-rank > 0) or to
  --data-parallel-address:--data-parallel-rpc-port (one connection per local engine core), holds
  the connections and exits 1 when rank 0 goes away.

Rank 0 also serves /metrics (mock_scheduler's token counter and running requests under vLLM's
names), and its /v1/completions goes through mock_scheduler, whose MOCK_WEDGE_*,
MOCK_SLOW_SECONDS, MOCK_BACKGROUND_REQUESTS, MOCK_GENERATE_FAILS_FOR and MOCK_SIGTERM apply. On
SIGTERM it drains as vLLM >= 0.18.0 does: with --shutdown-timeout N > 0, new requests get 503 and
those in flight get up to N seconds; with 0 (the default) it exits at once.

Environment (never flags: real vLLM would refuse them):
  MOCK_VLLM_ARGV_FILE      where to record argv (default $HOME/mock-vllm-argv.json)
  MOCK_VLLM_LOAD_SECONDS   fake weight-loading time (default 2)
  MOCK_OOM_ABOVE           the CUDA OOM at every start whose --gpu-memory-utilization (unset:
                           0.92, CacheConfig's default) is above this
"""

import argparse
import datetime
import json
import os
import socket
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mock_scheduler import PROMETHEUS_TEXT, NotReady, release, send_body, install_sigterm, oom_above, prometheus, scheduler_for
from vllm.version import __version__

# vllm/config/parallel.py: ParallelConfig.master_port and data_parallel_rpc_port defaults.
MASTER_PORT = 29501
DP_RPC_PORT = 29550


# vllm/engine/arg_utils.py: --nnodes/--node-rank/--master-addr/--master-port came with the
# multiprocessing executor's multi-node support (vllm-project/vllm #23691, v0.11.1);
# --shutdown-timeout with #34730/#36666 (v0.18.0). An older release exits 2 on them.
MP_MULTI_NODE = (0, 11, 1)
SHUTDOWN_TIMEOUT = (0, 18, 0)
# --headless and the data-parallel multi-node flags (--data-parallel-size-local, -start-rank,
# -address, -rpc-port) came with vllm-project/vllm #15977, first in v0.9.0 (src/catalog/engines).
DP_SCALE_OUT = (0, 9, 0)


def bool_flag(add, *names):
    # vLLM's boolean config fields are BooleanOptionalAction: --x and --no-x.
    add(*names, action=argparse.BooleanOptionalAction, default=None)


def build_parser():
    # FlexibleArgumentParser: no prefix matching (allow_abbrev=False).
    parser = argparse.ArgumentParser(prog="vllm", allow_abbrev=False)
    commands = parser.add_subparsers(dest="subparser", required=True)
    serve = commands.add_parser("serve", allow_abbrev=False, usage="vllm serve [model_tag] [options]")
    add = serve.add_argument
    add("model_tag", nargs="?", default=None)
    add("--model", type=str, default=None)
    # vllm/entrypoints/openai/cli_args.py (frontend) and cli/serve.py.
    if release(__version__) >= DP_SCALE_OUT:
        add("--headless", action="store_true", default=False)
    else:
        serve.set_defaults(headless=False)
    add("--api-server-count", "-asc", type=int, default=None)
    add("--host", type=str, default=None)
    add("--port", type=int, default=8000)
    add("--uvicorn-log-level", type=str, default="info")
    add("--api-key", type=str, default=None)
    add("--root-path", type=str, default=None)
    add("--disable-log-stats", action="store_true")
    if release(__version__) >= SHUTDOWN_TIMEOUT:
        add("--shutdown-timeout", type=int, default=0)
    else:
        serve.set_defaults(shutdown_timeout=0)
    add("--enable-log-requests", action="store_true")
    # ModelConfig, LoadConfig, CacheConfig, SchedulerConfig, SpeculativeConfig (arg_utils.py).
    add("--served-model-name", nargs="+", default=None)
    add("--tokenizer", type=str, default=None)
    add("--revision", type=str, default=None)
    bool_flag(add, "--trust-remote-code")
    add("--dtype", type=str, default="auto")
    add("--seed", type=int, default=None)
    add("--max-model-len", type=str, default=None)
    add("--download-dir", type=str, default=None)
    add("--load-format", type=str, default="auto")
    add("--quantization", "-q", type=str, default=None)
    bool_flag(add, "--enforce-eager")
    add("--kv-cache-dtype", type=str, default="auto")
    add("--gpu-memory-utilization", type=float, default=None)
    add("--block-size", type=int, default=None)
    add("--swap-space", type=float, default=None)
    bool_flag(add, "--enable-prefix-caching")
    add("--max-num-seqs", type=int, default=None)
    add("--max-num-batched-tokens", type=str, default=None)
    bool_flag(add, "--enable-chunked-prefill")
    add("--max-cudagraph-capture-size", type=int, default=None)
    add("--speculative-config", type=json.loads, default=None)
    # ParallelConfig (arg_utils.py add_cli_args, the parallel group).
    add("--distributed-executor-backend", type=str, default=None)
    add("--pipeline-parallel-size", "-pp", type=int, default=1)
    if release(__version__) >= MP_MULTI_NODE:
        add("--master-addr", type=str, default="127.0.0.1")
        add("--master-port", type=int, default=MASTER_PORT)
        add("--nnodes", "-n", type=int, default=1)
        add("--node-rank", "-r", type=int, default=0)
    else:
        serve.set_defaults(master_addr="127.0.0.1", master_port=MASTER_PORT, nnodes=1, node_rank=0)
    add("--tensor-parallel-size", "-tp", type=int, default=1)
    add("--data-parallel-size", "-dp", type=int, default=1)
    add("--data-parallel-rank", "-dpn", type=int, default=None)
    if release(__version__) >= DP_SCALE_OUT:
        add("--data-parallel-start-rank", "-dpr", type=int, default=None)
        add("--data-parallel-size-local", "-dpl", type=int, default=None)
        add("--data-parallel-address", "-dpa", type=str, default=None)
        add("--data-parallel-rpc-port", "-dpp", type=int, default=None)
    else:
        serve.set_defaults(data_parallel_start_rank=None, data_parallel_size_local=None,
                           data_parallel_address=None, data_parallel_rpc_port=None)
    add("--data-parallel-backend", "-dpb", type=str, default="mp")
    bool_flag(add, "--data-parallel-hybrid-lb", "-dph")
    bool_flag(add, "--data-parallel-external-lb", "-dpe")
    bool_flag(add, "--enable-expert-parallel", "-ep")
    return parser


def normalise(argv):
    # FlexibleArgumentParser also takes --snake_case spellings of every flag.
    out = []
    for arg in argv:
        if arg.startswith("--") and "_" in arg.split("=", 1)[0]:
            name, sep, value = arg.partition("=")
            arg = name.replace("_", "-") + sep + value
        out.append(arg)
    return out


def log(message):
    now = datetime.datetime.now().strftime("%m-%d %H:%M:%S")
    print(f"INFO {now} [mock] {message}", flush=True)


def fail(message):
    print(f"ValueError: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def record_argv():
    path = os.environ.get("MOCK_VLLM_ARGV_FILE")
    if not path:
        path = os.path.join(os.environ.get("HOME") or "/tmp", "mock-vllm-argv.json")
    # The console script as exec() named it, then its arguments: what gpulaunch's unit runs.
    argv = [sys.argv[0]] + sys.argv[1:]
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".mock-vllm-argv.", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(argv, f, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)
    except OSError as error:
        print(f"mock-vllm: cannot record argv to {path}: {error}", file=sys.stderr, flush=True)


def load(seconds):
    log(f"Starting to load model {ARGS.model}...")
    steps = 4
    for i in range(1, steps + 1):
        time.sleep(seconds / steps)
        print(f"Loading safetensors checkpoint shards: {100 * i // steps:3d}% Completed | {i}/{steps}",
              flush=True)
    log(f"Loading weights took {seconds:.2f} seconds")
    log("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%")


def accept_peers(port, expected):
    """Rank 0's side of the rendezvous: returns once `expected` peers are connected."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("", port))
    server.listen(64)
    peers = []
    log(f"waiting for {expected} remote rank(s) on port {port}")
    while len(peers) < expected:
        connection, address = server.accept()
        peers.append(connection)
        log(f"rank joined from {address[0]}:{address[1]} ({len(peers)}/{expected})")

    def watch(connection):
        try:
            while connection.recv(1024):
                pass
        except OSError:
            pass
        log("a remote rank went away")

    for connection in peers:
        threading.Thread(target=watch, args=(connection,), daemon=True).start()
    # Kept for the process's life: a closed socket would end the peers' rendezvous.
    HELD.extend([server] + peers)


def join(host, port, count):
    """A headless rank's side: `count` connections to rank 0, retried until it listens."""
    connections = []
    while len(connections) < count:
        try:
            connections.append(socket.create_connection((host, port), timeout=5))
        except OSError:
            time.sleep(0.2)
    for connection in connections:
        connection.settimeout(None)
    log(f"joined rank 0 at {host}:{port}")
    return connections


def make_handler(name, scheduler):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            log(f'{self.client_address[0]} - "{self.requestline}" {args[1] if len(args) > 1 else ""}')

        def reply(self, status, body):
            send_body(self, status, body)

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/health":
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif path == "/v1/models":
                self.reply(200, {"object": "list", "data": [{
                    "id": name, "object": "model", "created": int(time.time()),
                    "owned_by": "vllm", "root": ARGS.model, "max_model_len": 131072}]})
            elif path == "/metrics":
                self.reply_metrics()
            else:
                self.reply(404, {"detail": "Not Found"})

        def reply_metrics(self):
            # Names as vllm/v1/metrics/loggers.py (a6f0308) registers them: the gauges
            # vllm:num_requests_running and vllm:num_requests_waiting and the counter
            # vllm:generation_tokens, which prometheus_client exposes as
            # vllm:generation_tokens_total; labels model_name and engine.
            labels = {"engine": "0", "model_name": name}
            running, waiting = scheduler.processing_deferred()
            data = prometheus([
                ("vllm:num_requests_running", "gauge",
                 "Number of requests in model execution batches.", labels, running),
                ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
                 labels, waiting),
                ("vllm:generation_tokens_total", "counter",
                 "Number of generation tokens processed.", labels, scheduler.tokens()),
            ])
            send_body(self, 200, data, PROMETHEUS_TEXT)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.path.split("?", 1)[0] != "/v1/completions":
                self.reply(404, {"detail": "Not Found"})
                return
            try:
                request = json.loads(body or b"{}")
            except ValueError:
                self.reply(400, {"object": "error", "message": "Invalid JSON", "code": 400})
                return
            if request.get("model") not in (None, name):
                self.reply(404, {"object": "error", "type": "NotFoundError", "code": 404,
                                 "message": f"The model `{request.get('model')}` does not exist."})
                return
            if request.get("prompt") is None:
                # protocol.py CompletionRequest: a prompt (or prompt_embeds) is required.
                self.reply(400, {"object": "error", "type": "BadRequestError", "code": 400,
                                 "message": "Either prompt or prompt_embeds must be provided."})
                return
            tokens = len(str(request.get("prompt", "")).split())
            try:
                # CompletionRequest.max_tokens defaults to 16.
                completion = scheduler.generate(request.get("max_tokens") or 16)
            except NotReady as why:
                self.reply(503, {"object": "error", "type": "ServiceUnavailableError",
                                 "code": 503, "message": str(why)})
                return
            self.reply(200, {
                "id": f"cmpl-mock{int(time.time() * 1000)}", "object": "text_completion",
                "created": int(time.time()), "model": name,
                "choices": [{"index": 0, "text": " mock completion", "logprobs": None,
                             "finish_reason": "length", "stop_reason": None}],
                "usage": {"prompt_tokens": tokens, "completion_tokens": completion,
                          "total_tokens": tokens + completion}})

    return Handler


def run_headless():
    # cli/serve.py run_headless: no API server, ever.
    if ARGS.api_server_count:
        fail(f"--api-server-count={ARGS.api_server_count} cannot be used with --headless "
             "(no API servers are started in headless mode).")
    if ARGS.nnodes > 1 and ARGS.node_rank > 0:
        log(f"Launching vLLM (v{__version__}) headless multiproc executor, with head node address "
            f"{ARGS.master_addr}:{ARGS.master_port} for torch.distributed process group.")
        host, port, count = ARGS.master_addr, ARGS.master_port, 1
    else:
        local = ARGS.data_parallel_size_local
        if not local or local <= 0:
            fail("data_parallel_size_local must be > 0 in headless mode")
        host = ARGS.data_parallel_address or "127.0.0.1"
        port = ARGS.data_parallel_rpc_port or DP_RPC_PORT
        log(f"Launching {local} data parallel engine(s) in headless mode, with head node "
            f"address tcp://{host}:{port}.")
        count = local
    # torch.distributed (and the engine cores' handshake) join the group before the weights load.
    connections = join(host, port, count)
    load(LOAD_SECONDS)
    # Held until rank 0 goes away: then the group is gone and so is this rank.
    while True:
        if not connections[0].recv(1024):
            print("RuntimeError: lost the connection to rank 0 (head node)", file=sys.stderr,
                  flush=True)
            sys.exit(1)


def mode():
    """MOCK_VLLM_MODE_FILE's content at this start: "cuda-oom", else normal."""
    path = os.environ.get("MOCK_VLLM_MODE_FILE")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() or "normal"
    except (OSError, TypeError):
        return "normal"


def run_server():
    name = ARGS.served_model_name[0] if ARGS.served_model_name else ARGS.model
    if ARGS.nnodes > 1:
        accept_peers(ARGS.master_port, ARGS.nnodes - 1)
    local = ARGS.data_parallel_size_local
    if local is not None and local < ARGS.data_parallel_size and ARGS.data_parallel_start_rank is None:
        accept_peers(ARGS.data_parallel_rpc_port or DP_RPC_PORT, ARGS.data_parallel_size - local)
    load(LOAD_SECONDS)
    if mode() == "cuda-oom" or oom_above(ARGS.gpu_memory_utilization, 0.92):
        # The profile run of the KV cache sizing, as torch reports an allocation it cannot make.
        print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
              "total capacity of 139.81 GiB of which 1.12 GiB is free.", file=sys.stderr, flush=True)
        sys.exit(1)
    host = ARGS.host or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    ThreadingHTTPServer.address_family = family
    global SCHEDULER
    # --max-num-seqs caps the running batch; the rest wait (vllm/v1/core/sched/scheduler.py).
    scheduler = SCHEDULER = scheduler_for(ARGS.max_num_seqs)
    server = ThreadingHTTPServer((host, ARGS.port), make_handler(name, scheduler))
    server.daemon_threads = True
    log(f"Starting vLLM API server 0 on http://{host}:{ARGS.port}")
    print("INFO:     Application startup complete.", flush=True)
    scheduler.set_ready()
    server.serve_forever()


def main(argv=None):
    global ARGS, LOAD_SECONDS
    record_argv()
    args = build_parser().parse_args(normalise(sys.argv[1:] if argv is None else argv))
    args.model = args.model_tag or args.model
    if not args.model:
        fail("a model is required: vllm serve MODEL")
    ARGS = args
    try:
        LOAD_SECONDS = float(os.environ.get("MOCK_VLLM_LOAD_SECONDS", "2"))
    except ValueError:
        LOAD_SECONDS = 2.0
    # --shutdown-timeout (vLLM >= 0.18.0): SIGTERM drains for that long; 0 aborts at once.
    install_sigterm(lambda: SCHEDULER, args.shutdown_timeout, log, refuse_new=True)
    log(f"vLLM API server version {__version__}")
    if args.headless:
        run_headless()
    else:
        run_server()
    return 0


ARGS = None
SCHEDULER = None  # rank 0's, once it serves
LOAD_SECONDS = 2.0
HELD = []

if __name__ == "__main__":
    sys.exit(main())
