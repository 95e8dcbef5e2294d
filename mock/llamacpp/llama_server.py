# SPDX-License-Identifier: Apache-2.0
"""Mock of llama.cpp's `llama-server` (tools/server, ggml-org/llama.cpp 00dc805) for gpulaunch
tests, installed as VENV/bin/llama-server by mock/install.sh.

Pure standard library. Accepts the server flags gpulaunch emits and the common ones, spelled as
common/arg.cpp spells them (short forms included, '_' read as '-' in a "--" argument, no
"=VALUE" form); anything else exits 1 with "error: invalid argument: FLAG", as llama.cpp's parser
does. What gpulaunch's liveness depends on:

- `--parallel N` (`-np`) slots. A completion that finds every slot busy is deferred on the task
  queue, FIFO, until a slot frees (tools/server/server.cpp): a probe waits behind long
  generations while the decode counter keeps moving.
- `/metrics` only with `--metrics` (otherwise 501, "This server does not support metrics
  endpoint. Start it with `--metrics`"): llamacpp:requests_processing and
  llamacpp:requests_deferred (gauges), llamacpp:n_decode_total (one llama_decode() call per step
  while any slot works) and llamacpp:tokens_predicted_total (added to when a request ends).
- The API key: `--api-key KEY` (env LLAMA_API_KEY) or `--api-key-file FILE` (one key a line);
  with one, every path but /health, /v1/health, /models and /v1/models answers 401 without
  "Authorization: Bearer KEY".
- `/health`: 503 {"error": {"message": "Loading model"}} while loading, then 200 {"status": "ok"}.

MOCK_WEDGE_*, MOCK_SLOW_SECONDS, MOCK_BACKGROUND_REQUESTS and MOCK_STEP_SECONDS apply as in
mock_scheduler; background requests take slots like any client's.

Environment (never flags: real llama-server would refuse them):
  MOCK_LLAMACPP_ARGV_FILE      where to record argv (default $HOME/mock-llamacpp-argv.json)
  MOCK_LLAMACPP_LOAD_SECONDS   fake model-loading time (default 1)
"""

import json
import os
import signal
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mock_scheduler import NotReady, SlotScheduler, prometheus, send_body

VERSION = "00dc805"
PUBLIC_PATHS = {"/health", "/v1/health", "/models", "/v1/models"}

# common/arg.cpp: each flag with its value count (0: a switch), every spelling.
FLAGS = {}
for names, arity in [
    (("-m", "--model"), 1), (("-a", "--alias"), 1), (("--host",), 1), (("--port",), 1),
    (("-ngl", "--gpu-layers", "--n-gpu-layers"), 1), (("-c", "--ctx-size"), 1),
    (("-np", "--parallel"), 1), (("-b", "--batch-size"), 1), (("-ub", "--ubatch-size"), 1),
    (("-t", "--threads"), 1), (("-fa", "--flash-attn"), 1), (("--metrics",), 0),
    (("--slots",), 0), (("--no-slots",), 0), (("--api-key",), 1), (("--api-key-file",), 1),
    (("--jinja",), 0), (("--chat-template",), 1), (("--chat-template-file",), 1),
    (("-n", "--predict", "--n-predict"), 1), (("--no-webui",), 0), (("--mlock",), 0),
    (("--no-mmap",), 0), (("-sm", "--split-mode"), 1), (("-ts", "--tensor-split"), 1),
    (("-mg", "--main-gpu"), 1), (("--cont-batching", "-cb"), 0), (("--log-verbose", "-lv"), 0),
]:
    for name in names:
        FLAGS[name] = (names[-1] if names[-1].startswith("--") else names[0], arity)


def record_argv():
    path = os.environ.get("MOCK_LLAMACPP_ARGV_FILE") or os.path.join(
        os.environ.get("HOME") or "/tmp", "mock-llamacpp-argv.json")
    directory = os.path.dirname(path) or "."
    try:
        with tempfile.NamedTemporaryFile("w", dir=directory, delete=False) as out:
            json.dump(sys.argv, out)
        os.replace(out.name, path)
    except OSError:
        pass


def parse(argv):
    """{canonical flag: value or True}; exits 1 as llama.cpp does on an unknown flag."""
    options = {}
    i = 0
    while i < len(argv):
        word = argv[i]
        # common/arg.cpp: '_' reads as '-' in a "--" argument; no "=VALUE" form.
        name = word.replace("_", "-") if word.startswith("--") else word
        if name not in FLAGS:
            print(f"error: invalid argument: {word}", file=sys.stderr, flush=True)
            sys.exit(1)
        canonical, arity = FLAGS[name]
        if arity == 0:
            options[canonical] = True
            i += 1
            continue
        if i + 1 >= len(argv):
            print(f"error: expected value for argument: {word}", file=sys.stderr, flush=True)
            sys.exit(1)
        options[canonical] = argv[i + 1]
        i += 2
    return options


def api_keys(options):
    keys = []
    if "--api-key" in options:
        keys.append(options["--api-key"])
    elif os.environ.get("LLAMA_API_KEY"):
        keys.append(os.environ["LLAMA_API_KEY"])
    if "--api-key-file" in options:
        try:
            with open(options["--api-key-file"], encoding="utf-8") as keys_file:
                keys.extend(line.strip() for line in keys_file if line.strip())
        except OSError:
            print(f"error: failed to open file '{options['--api-key-file']}'", file=sys.stderr,
                  flush=True)
            sys.exit(1)
    return keys


def serve(options):
    host = options.get("--host", "127.0.0.1")
    port = int(options.get("--port", 8080))
    keys = api_keys(options)
    metrics_on = bool(options.get("--metrics"))
    scheduler = SlotScheduler(int(options.get("--parallel", 1)))
    alias = options.get("--alias") or options.get("--model", "model")
    ready = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, body, content_type="application/json"):
            send_body(self, status, body, content_type)

        def authorised(self):
            if not keys or self.path.split("?")[0] in PUBLIC_PATHS:
                return True
            given = self.headers.get("Authorization", "")
            if given.startswith("Bearer ") and given[len("Bearer "):] in keys:
                return True
            if self.headers.get("X-Api-Key", "") in keys:
                return True
            self.answer(401, {"error": {"code": 401, "message": "Invalid API Key",
                                        "type": "authentication_error"}})
            return False

        def do_GET(self):
            path = self.path.split("?")[0]
            if not self.authorised():
                return
            if path in ("/health", "/v1/health"):
                if not ready.is_set():
                    return self.answer(503, {"error": {"code": 503, "message": "Loading model",
                                                       "type": "unavailable_error"}})
                return self.answer(200, {"status": "ok"})
            if path in ("/models", "/v1/models"):
                return self.answer(200, {"object": "list", "data": [{"id": alias}]})
            if path == "/metrics":
                if not metrics_on:
                    return self.answer(501, {"error": {
                        "code": 501, "type": "not_supported_error",
                        "message": "This server does not support metrics endpoint. "
                                   "Start it with `--metrics`"}})
                processing, deferred = scheduler.processing_deferred()
                _, finished, _ = scheduler.counters()
                return self.answer(200, prometheus([
                    ("llamacpp:requests_processing", "gauge", "Number of requests processing.",
                     {}, processing),
                    ("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", {},
                     deferred),
                    ("llamacpp:n_decode_total", "counter", "Total number of llama_decode() calls",
                     {}, scheduler.decode_calls()),
                    ("llamacpp:tokens_predicted_total", "counter",
                     "Number of generation tokens processed.", {}, finished),
                ]), "text/plain; version=0.0.4")
            self.answer(404, {"error": {"code": 404, "message": "File Not Found",
                                        "type": "not_found_error"}})

        def do_POST(self):
            path = self.path.split("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if not self.authorised():
                return
            if path not in ("/completion", "/completions", "/v1/completions"):
                return self.answer(404, {"error": {"code": 404, "message": "File Not Found",
                                                   "type": "not_found_error"}})
            if not ready.is_set():
                return self.answer(503, {"error": {"code": 503, "message": "Loading model",
                                                   "type": "unavailable_error"}})
            try:
                request = json.loads(body or b"{}")
            except ValueError:
                return self.answer(400, {"error": {"code": 400, "message": "invalid JSON",
                                                   "type": "invalid_request_error"}})
            n_predict = request.get("n_predict", request.get("max_tokens", 16))
            try:
                tokens = scheduler.generate(n_predict if n_predict and n_predict > 0 else 16)
            except NotReady as error:
                return self.answer(503, {"error": {"code": 503, "message": str(error),
                                                   "type": "unavailable_error"}})
            self.answer(200, {"content": "x" * tokens, "tokens_predicted": tokens,
                              "stop": True, "model": alias})

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="http", daemon=True).start()
    print(f"main: HTTP server is listening, hostname: {host}, port: {port}, http threads: 4",
          flush=True)
    print("main: loading model", flush=True)
    print(f"llama_model_loader: loaded meta data from {options.get('--model', '')}", flush=True)
    time.sleep(max(0.0, float(os.environ.get("MOCK_LLAMACPP_LOAD_SECONDS", "1"))))
    print(f"srv    load_model: initializing slots, n_slots = {scheduler.slots}", flush=True)
    print("main: model loaded", flush=True)
    print(f"main: server is listening on http://{host}:{port} - starting the main loop",
          flush=True)
    scheduler.set_ready()
    ready.set()
    print("srv  update_slots: all slots are idle", flush=True)
    threading.Event().wait()


def main():
    record_argv()
    if "--version" in sys.argv[1:]:
        print(f"version: 0 ({VERSION})", flush=True)
        return 0
    options = parse(sys.argv[1:])
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    serve(options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
