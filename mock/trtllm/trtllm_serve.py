# SPDX-License-Identifier: Apache-2.0
"""Mock of TensorRT-LLM's `trtllm-serve MODEL [options]` (tensorrt_llm/commands/serve.py and
tensorrt_llm/serve/openai_server.py, NVIDIA/TensorRT-LLM 0005772) for gpulaunch tests, installed
as VENV/bin/trtllm-serve by mock/install.sh.

Pure standard library. Accepts the options gpulaunch emits and the common ones, spelled as serve.py
spells them (click: `--opt VALUE` or `--opt=VALUE`); any other exits 2 with click's "Error: No
such option: --x". What gpulaunch's liveness depends on:

- `--max_batch_size N` requests run at once (the mock's default 8); the rest wait in the queue,
  FIFO, making no progress (mock_scheduler.SlotScheduler).
- `GET /health_generate` is a one-token chat completion through that same queue: it waits
  behind a saturated engine, and answers 500 for a model without a chat template
  (MOCK_TRTLLM_CHAT_TEMPLATE=0), as the chat template is applied before generation.
- `POST /v1/completions` needs `model` (the model as passed) and no template; `POST
  /v1/chat/completions` needs the template (400 without).
- `GET /metrics`: JSON iteration statistics, the iterations since the last read (each read drains
  them), only with `enable_iter_perf_stats: true` in the --extra_llm_api_options file; `[]`
  otherwise. Each entry has `iter`, `iterLatencyMS`, `numActiveRequests` and `numQueuedRequests`.
- `/health` 503 while loading, then 200.

MOCK_WEDGE_*, MOCK_SLOW_SECONDS, MOCK_BACKGROUND_REQUESTS and MOCK_STEP_SECONDS apply as in
mock_scheduler.

Environment (never options: real trtllm-serve would refuse them):
  MOCK_TRTLLM_ARGV_FILE       where to record argv (default $HOME/mock-trtllm-argv.json)
  MOCK_TRTLLM_LOAD_SECONDS    fake loading time (default 1)
  MOCK_TRTLLM_CHAT_TEMPLATE   0: the model has no chat template (default 1)
"""

import json
import os
import signal
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mock_scheduler import NotReady, SlotScheduler, send_body

OPTIONS = {
    "--host": 1, "--port": 1, "--backend": 1, "--tp_size": 1, "--pp_size": 1, "--ep_size": 1,
    "--cluster_size": 1, "--gpus_per_node": 1, "--kv_cache_free_gpu_memory_fraction": 1,
    "--max_batch_size": 1, "--max_num_tokens": 1, "--max_seq_len": 1, "--max_beam_width": 1,
    "--tokenizer": 1, "--extra_llm_api_options": 1, "--log_level": 1,
    "--num_postprocess_workers": 1, "--reasoning_parser": 1, "--trust_remote_code": 0,
}


def record_argv():
    path = os.environ.get("MOCK_TRTLLM_ARGV_FILE") or os.path.join(
        os.environ.get("HOME") or "/tmp", "mock-trtllm-argv.json")
    try:
        with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(path) or ".",
                                         delete=False) as out:
            json.dump(sys.argv, out)
        os.replace(out.name, path)
    except OSError:
        pass


def usage_error(message):
    print("Usage: trtllm-serve [OPTIONS] MODEL\nTry 'trtllm-serve --help' for help.\n\n"
          f"Error: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def parse(argv):
    options, model = {}, None
    i = 0
    while i < len(argv):
        word = argv[i]
        if word.startswith("--"):
            name, equals, inline = word.partition("=")
            if name not in OPTIONS:
                usage_error(f"No such option: {name}")
            if OPTIONS[name] == 0:
                options[name] = True
                i += 1
            elif equals:
                options[name] = inline
                i += 1
            elif i + 1 < len(argv):
                options[name] = argv[i + 1]
                i += 2
            else:
                usage_error(f"Option '{name}' requires an argument.")
        elif model is None:
            model = word
            i += 1
        else:
            usage_error(f"Got unexpected extra argument ({word})")
    if model is None:
        usage_error("Missing argument 'MODEL'.")
    return model, options


def iteration_stats_enabled(options):
    path = options.get("--extra_llm_api_options")
    if not path:
        return False
    try:
        with open(path, encoding="utf-8") as config:
            return any(line.split("#")[0].strip().replace(" ", "") == "enable_iter_perf_stats:true"
                       for line in config)
    except OSError:
        return False


class IterationScheduler(SlotScheduler):
    """SlotScheduler that keeps each iteration's statistics until /metrics reads them."""

    def __init__(self, slots, keep):
        self.keep = keep
        self.stats = []
        super().__init__(slots)

    def on_iteration(self, active, queued):
        if self.keep:
            self.stats.append({"iter": self.n_decode, "iterLatencyMS": self.step * 1e3,
                               "numActiveRequests": active, "numQueuedRequests": queued})
            del self.stats[:-1000]

    def drain_stats(self):
        with self.lock:
            stats, self.stats = self.stats, []
        return stats


def serve(model, options):
    host = options.get("--host", "localhost")
    port = int(options.get("--port", 8000))
    has_template = os.environ.get("MOCK_TRTLLM_CHAT_TEMPLATE", "1") != "0"
    scheduler = IterationScheduler(int(options.get("--max_batch_size", 8)),
                                   iteration_stats_enabled(options))
    ready = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, body):
            send_body(self, status, body)

        def error(self, status, message):
            self.answer(status, {"object": "error", "message": message, "type": "BadRequestError",
                                 "code": status})

        def generate(self, tokens):
            try:
                return scheduler.generate(tokens)
            except NotReady as error:
                self.error(503, str(error))
                return None

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/health":
                return self.answer(200 if ready.is_set() else 503, {})
            if path == "/health_generate":
                # openai_server.py: a one-token chat completion for the model itself.
                if not ready.is_set() or not has_template:
                    return self.error(500, "Health check failed: the model has no chat template"
                                      if ready.is_set() else "Server is not ready")
                if self.generate(1) is not None:
                    self.answer(200, {})
                return
            if path == "/metrics":
                return self.answer(200, scheduler.drain_stats())
            if path == "/v1/models":
                return self.answer(200, {"object": "list", "data": [{"id": model}]})
            self.error(404, "Not Found")

        def do_POST(self):
            path = self.path.split("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            try:
                request = json.loads(self.rfile.read(length) if length else b"{}")
            except ValueError:
                return self.error(400, "invalid JSON")
            if path not in ("/v1/completions", "/v1/chat/completions"):
                return self.error(404, "Not Found")
            if "model" not in request:
                return self.error(400, "Field required: model")
            if path == "/v1/chat/completions" and not has_template:
                return self.error(400, "the model has no chat template")
            if not ready.is_set():
                return self.error(503, "Server is not ready")
            wanted = request.get("max_completion_tokens") or request.get("max_tokens") or 16
            tokens = self.generate(wanted)
            if tokens is not None:
                self.answer(200, {"object": "text_completion", "model": request["model"],
                                  "choices": [{"index": 0, "text": "x" * tokens}],
                                  "usage": {"completion_tokens": tokens}})

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="http", daemon=True).start()
    print(f"[TensorRT-LLM] loading {model}", flush=True)
    time.sleep(max(0.0, float(os.environ.get("MOCK_TRTLLM_LOAD_SECONDS", "1"))))
    scheduler.set_ready()
    ready.set()
    print("INFO:     Application startup complete.", flush=True)
    print(f"INFO:     Uvicorn running on http://{host}:{port} (Press CTRL+C to quit)", flush=True)
    threading.Event().wait()


def main():
    record_argv()
    model, options = parse(sys.argv[1:])
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    serve(model, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
