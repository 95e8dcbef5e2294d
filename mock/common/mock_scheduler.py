# SPDX-License-Identifier: Apache-2.0
"""The forward-progress half of the mock engines (mock SGLang and mock vLLM): a fake scheduler
that "generates" tokens for the requests in flight, the Prometheus /metrics text each engine
serves about it, and the ways it goes wrong for gpulaunch's liveness tests.

Installed beside both mocks by mock/install.sh. Pure standard library; every thread is a real
Python thread, so faulthandler's dump (PYTHONFAULTHANDLER=1, then SIGABRT) shows each one: the
forward loop stuck in wait_for_gpu_kernel(), each HTTP handler in Request.wait().

Environment (the same names for both mocks; never flags, the real engines would reject them):
  MOCK_WEDGE_AFTER          seconds after ready until the wedge: /health stays 200, /metrics
                            answers, every generation request hangs, the token counter stops
                            with MOCK_WEDGE_IN_FLIGHT requests (at least) in flight
  MOCK_WEDGE_FILE           wedge as soon as this file exists (checked every step)
  MOCK_WEDGE_IN_FLIGHT      requests left running at the wedge (default 2)
  MOCK_SLOW_SECONDS         every generation request takes this long while the token counter
                            keeps growing (one token per running request per step)
  MOCK_BACKGROUND_REQUESTS  requests kept running at all times once ready, as a busy server's
                            clients would (default 0); each takes MOCK_SLOW_SECONDS or 1 s
  MOCK_GENERATE_FAILS_FOR   seconds after ready during which generation answers 503 while
                            /health is 200 (an engine that is up before it can generate)
  MOCK_STEP_SECONDS         one forward step (default 0.05)
  MOCK_JIT_GROW_SECONDS     after the weights, a first-use JIT build this long that prints
                            nothing (vLLM #38246) while it writes into the JIT cache
  MOCK_JIT_GROW_KIB_PER_SECOND  what that build writes (default 256); 0: it writes nothing
                            either, a start that is dead rather than compiling
  MOCK_JIT_CACHE_VARIABLE   the variable naming the cache it writes to (default
                            FLASHINFER_WORKSPACE_BASE: FlashInfer's .cache/flashinfer below it)
  MOCK_JIT_KEY              what the build is for (default mock): a finished build is recorded
                            under it, and a later start that finds it whole compiles nothing
  MOCK_SIGTERM              what SIGTERM does (install_sigterm): drain (default), the engine's
                            own graceful shutdown: those in flight finished (within the engine's
                            bound, where it has one; new ones refused with 503 where it does), exit
                            0 (at once when the scheduler is wedged); or ignore: logged and
                            recorded, nothing else (an engine that never stops on it, which
                            only SIGKILL ends)
  MOCK_DRAIN_REPORT         where to write what SIGTERM found and did, as JSON (default
                            $HOME/mock-drain.json)
  MOCK_DRAIN_POLL_SECONDS   how often an unbounded drain (SGLang's) looks again (default 1;
                            SGLang's own sigterm_watchdog looks every 5 s)
"""

import json

import os
import signal
import threading
import time


def release(version):
    """The leading numbers of a version ("0.5.16+mock" -> (0, 5, 16)): what a mock compares with
    the release a flag came in."""
    numbers = []
    for part in version.split("+")[0].split("."):
        if not part.isdigit():
            break
        numbers.append(int(part))
    return tuple(numbers)


def env_float(name, default):
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return float(default)


def oom_above(share, engine_default):
    """MOCK_OOM_ABOVE: whether this start runs out of GPU memory because its memory share (the
    engine's flag, else `engine_default`, the share the engine picks itself) is above it. A model
    whose activations and CUDA graphs need more room than the default share leaves: it fails the
    same way at every start until the share is lowered, and serves once it is."""
    limit = os.environ.get("MOCK_OOM_ABOVE", "").strip()
    if not limit:
        return False
    return (engine_default if share is None else share) > float(limit)


class NotReady(Exception):
    """Generation is refused for now (loading, or MOCK_GENERATE_FAILS_FOR)."""


class Request:
    def __init__(self, max_tokens, min_seconds):
        self.max_tokens = max(1, int(max_tokens))
        self.deadline = time.monotonic() + min_seconds
        self.tokens = 0
        self.finished = threading.Event()

    def wait(self, timeout=None):
        # A handler thread blocks here until the forward loop finishes the request: in a wedge,
        # forever, which is what the thread dump shows.
        return self.finished.wait(timeout)


class Scheduler:
    def __init__(self):
        self.lock = threading.Lock()
        self.running = []
        self.generation_tokens = 0  # every token, as each step makes it
        self.finished_tokens = 0  # tokens of finished requests only
        self.admitted = 0  # requests that entered the batch (their prefill)
        self.ready_at = None
        self.wedged = threading.Event()
        self.step = max(0.001, env_float("MOCK_STEP_SECONDS", 0.05))
        self.wedge_after = os.environ.get("MOCK_WEDGE_AFTER")
        self.wedge_file = os.environ.get("MOCK_WEDGE_FILE") or None
        self.wedge_in_flight = int(env_float("MOCK_WEDGE_IN_FLIGHT", 2))
        self.slow_seconds = max(0.0, env_float("MOCK_SLOW_SECONDS", 0))
        self.background = int(env_float("MOCK_BACKGROUND_REQUESTS", 0))
        self.fails_for = max(0.0, env_float("MOCK_GENERATE_FAILS_FOR", 0))
        self.draining = False  # SIGTERM came: background clients stop
        self.refusing = False  # and, where the engine does so, new generations get 503
        self.refused_while_draining = 0
        threading.Thread(target=self.forward_loop, name="forward-loop", daemon=True).start()

    def set_ready(self):
        self.ready_at = time.monotonic()
        for _ in range(self.background):
            threading.Thread(target=self.background_client, name="background-client",
                             daemon=True).start()

    def in_flight(self):
        with self.lock:
            return len(self.running)

    def processing_deferred(self):
        """(running, waiting): every request runs at once here."""
        return self.in_flight(), 0

    def tokens(self):
        with self.lock:
            return self.generation_tokens

    def counters(self):
        """(tokens generated, tokens of finished requests, requests admitted), at one instant."""
        with self.lock:
            return self.generation_tokens, self.finished_tokens, self.admitted

    def generate(self, max_tokens):
        """Blocks until the request is done and returns how many tokens it got; NotReady when
        generation is refused. In a wedge it never returns."""
        if self.ready_at is None:
            raise NotReady("Server is not ready")
        with self.lock:
            if self.refusing:
                self.refused_while_draining += 1
                raise NotReady("The server is shutting down")
        if time.monotonic() < self.ready_at + self.fails_for:
            raise NotReady("The engine is still warming up")
        request = Request(max_tokens, self.slow_seconds)
        with self.lock:
            self.running.append(request)
            self.admitted += 1
        request.wait()
        return request.tokens

    def health_generate(self, timeout):
        """SGLang's /health_generate: one token within `timeout`, or any progress of the
        scheduler meanwhile (a busy server answers at once); False otherwise."""
        if self.ready_at is None or time.monotonic() < self.ready_at + self.fails_for:
            return False
        if self.draining:
            return False
        before = self.tokens()
        request = Request(1, 0)
        with self.lock:
            self.running.append(request)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if request.wait(min(1.0, max(0.0, deadline - time.monotonic()))):
                return True
            if self.tokens() > before + request.tokens:
                break
        else:
            with self.lock:
                if request in self.running:
                    self.running.remove(request)
            return False
        with self.lock:  # answered by progress: the probe itself is dropped
            if request in self.running:
                self.running.remove(request)
        return True

    def background_client(self):
        while not self.draining:
            request = Request(1 << 30, self.slow_seconds or 1.0)
            request.max_tokens = 1  # done once its time is up: a long generation
            with self.lock:
                self.running.append(request)
                self.admitted += 1
            request.wait()

    def should_wedge(self):
        if self.ready_at is None:
            return False
        if self.wedge_after is not None:
            try:
                if time.monotonic() >= self.ready_at + float(self.wedge_after):
                    return True
            except ValueError:
                pass
        return bool(self.wedge_file) and os.path.exists(self.wedge_file)

    def forward_loop(self):
        while True:
            time.sleep(self.step)
            if self.should_wedge():
                self.wedge()
            now = time.monotonic()
            with self.lock:
                for request in self.running:
                    request.tokens += 1
                    self.generation_tokens += 1
                done = [r for r in self.running if r.tokens >= r.max_tokens and now >= r.deadline]
                self.running = [r for r in self.running if r not in done]
                self.finished_tokens += sum(r.tokens for r in done)
            for request in done:
                request.finished.set()

    def wedge(self):
        with self.lock:
            while len(self.running) < self.wedge_in_flight:
                self.running.append(Request(1 << 30, 0))
        self.wedged.set()
        print("mock: wedged: /health stays 200, generation hangs, the token counter stops",
              flush=True)
        wait_for_gpu_kernel()


    def drain(self, bound, poll, say, refuse_new):
        """SIGTERM's drain: wait for the requests in flight, at most `bound` seconds (None: as
        long as they take, as SGLang does), refusing new ones meanwhile where `refuse_new` (vLLM);
        calls say(left) at each look and returns what it saw."""
        started = time.monotonic()
        with self.lock:
            self.draining = True
            self.refusing = refuse_new
            at_signal = len(self.running)
        if self.wedged.is_set():
            # Nothing in flight will finish: exit at once, as SGLang's sigterm_watchdog does
            # when its health check has failed ("Force exiting").
            return {"in_flight": at_signal, "finished": 0, "aborted": at_signal,
                    "refused": 0, "seconds": 0.0, "bound": bound, "wedged": True}
        while True:
            left = self.in_flight()
            say(left)
            elapsed = time.monotonic() - started
            if left == 0 or (bound is not None and elapsed >= bound):
                break
            time.sleep(poll if bound is None else max(0.0, min(poll, bound - elapsed)))
        with self.lock:
            left = len(self.running)
            refused = self.refused_while_draining
        return {"in_flight": at_signal, "finished": max(0, at_signal - left), "aborted": left,
                "refused": refused, "seconds": round(time.monotonic() - started, 2),
                "bound": bound}


class SlotScheduler(Scheduler):
    """The forward loop over `slots` slots (llama.cpp's --parallel, trtllm's --max_batch_size):
    the requests beyond them wait, FIFO, and make no progress until one frees; a slot makes at
    most its request's max_tokens tokens; one decode call (an iteration) per step while any slot
    works."""

    def __init__(self, slots):
        self.slots = max(1, slots)
        self.n_decode = 0
        super().__init__()

    def processing_deferred(self):
        with self.lock:
            running = len(self.running)
        return min(running, self.slots), max(0, running - self.slots)

    def decode_calls(self):
        with self.lock:
            return self.n_decode

    def forward_loop(self):
        while True:
            time.sleep(self.step)
            if self.should_wedge():
                self.wedge()
            now = time.monotonic()
            with self.lock:
                active = self.running[:self.slots]
                if active:
                    self.n_decode += 1
                for request in active:
                    # A slot makes at most max_tokens tokens; a long generation holds it.
                    if request.tokens < request.max_tokens:
                        request.tokens += 1
                        self.generation_tokens += 1
                done = [r for r in active if r.tokens >= r.max_tokens and now >= r.deadline]
                self.running = [r for r in self.running if r not in done]
                self.finished_tokens += sum(r.tokens for r in done)
                if active:
                    self.on_iteration(len(active), len(self.running) - len(active) + len(done))
            for request in done:
                request.finished.set()

    def on_iteration(self, active, queued):
        """Called under the lock after each iteration that ran requests."""


def scheduler_for(slots):
    """The scheduler of an engine whose cap on running requests is `slots` (SGLang's
    --max-running-requests, vLLM's --max-num-seqs): the requests beyond it wait, FIFO; None (the
    flag not given): every request runs at once, as the mocks did before they modelled the cap."""
    return SlotScheduler(slots) if slots else Scheduler()


def write_drain_report(report):
    path = os.environ.get("MOCK_DRAIN_REPORT") or os.path.join(
        os.environ.get("HOME") or "/tmp", "mock-drain.json")
    try:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(report, out)
            out.write("\n")
    except OSError as error:
        print(f"mock: cannot write the drain report to {path}: {error}", flush=True)


def install_sigterm(scheduler, bound, log, refuse_new):
    """SIGTERM and SIGINT as the engine handles them (gpulaunch's catalog/engines, DrainFacts):
    `scheduler()` is the serving scheduler or None while the engine still starts (it then exits
    at once); `bound` the engine's drain bound in seconds (None: unbounded, SGLang; 0: abort what
    is in flight and exit, vLLM's default); `refuse_new`: new generations get 503 meanwhile
    (vLLM's API server does; SGLang's drain only waits). MOCK_SIGTERM=ignore: logged and recorded
    only."""
    mode = os.environ.get("MOCK_SIGTERM", "drain").strip() or "drain"
    poll = max(0.05, env_float("MOCK_DRAIN_POLL_SECONDS", 1))
    started = []

    def drain_then_exit(signum, serving):
        report = serving.drain(bound, poll, lambda left: log(
            f"Gracefully exiting... Remaining number of requests {left}. "
            f"Remaining requests remaining_rids={['mock-%d' % i for i in range(left)]}."),
            refuse_new)
        report.update({"signal": signum, "mode": "drain"})
        write_drain_report(report)
        log(f"mock: drained after signal {signum}: {report['finished']} finished, "
            f"{report['aborted']} aborted, {report['refused']} refused; exiting")
        os._exit(0)

    def on_term(signum, _frame):
        if mode == "ignore":
            log(f"mock: ignoring signal {signum} (MOCK_SIGTERM=ignore)")
            write_drain_report({"signal": signum, "mode": "ignore"})
            return
        if started:
            return  # already draining: a second signal changes nothing
        started.append(signum)
        serving = scheduler()
        if serving is None or serving.ready_at is None or bound == 0:
            in_flight = serving.in_flight() if serving else 0
            write_drain_report({"signal": signum, "mode": "abort", "in_flight": in_flight,
                                "finished": 0, "aborted": in_flight})
            log(f"Received signal {signum}, shutting down.")
            os._exit(0)
        threading.Thread(target=drain_then_exit, args=(signum, serving), name="drain",
                         daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)


JIT_BUILD_RECORD = "mock-jit-build.json"


def cached_jit_build(directory, key):
    """Whether `directory` holds a finished build for `key`: its record names every object with
    its size, and each is there whole (a build cut short, or a cache missing a file, compiles
    again), as FlashInfer loads a built op instead of compiling it."""
    try:
        with open(os.path.join(directory, JIT_BUILD_RECORD)) as record_file:
            record = json.load(record_file)
        if record.get("key") != key or not record.get("objects"):
            return False
        return all(os.path.getsize(os.path.join(directory, name)) == size
                   for name, size in record["objects"].items())
    except (OSError, ValueError, AttributeError, TypeError):
        return False


def silent_jit_build():
    """A first-use JIT build as FlashInfer (v0.2.6 and later) runs one: nothing printed for
    MOCK_JIT_GROW_SECONDS, objects appearing in the cache meanwhile. A build that ran to its end
    leaves a record of its objects keyed by MOCK_JIT_KEY (default "mock": what they were compiled
    for); a start that finds that record with every object whole compiles nothing (a warm cache,
    or one imported from another node). Returns whether it compiled."""
    seconds = env_float("MOCK_JIT_GROW_SECONDS", 0)
    if seconds <= 0:
        return False
    rate = env_float("MOCK_JIT_GROW_KIB_PER_SECOND", 256) * 1024
    variable = os.environ.get("MOCK_JIT_CACHE_VARIABLE", "FLASHINFER_WORKSPACE_BASE")
    root = os.environ.get(variable, "")
    key = os.environ.get("MOCK_JIT_KEY", "mock")
    directory = os.path.join(root, ".cache", "flashinfer", "mock-jit", "cached_ops") if root else ""
    if directory and rate > 0:
        if cached_jit_build(directory, key):
            return False
        os.makedirs(directory, exist_ok=True)
    step = 0.5
    deadline = time.monotonic() + seconds
    number = 0
    objects = {}
    while time.monotonic() < deadline:
        time.sleep(step)
        if directory and rate > 0:
            number += 1
            name = f"kernel_{number}.o"
            content = os.urandom(int(rate * step))
            with open(os.path.join(directory, name), "wb") as out:
                out.write(content)
            objects[name] = len(content)
    if objects:
        temporary = os.path.join(directory, JIT_BUILD_RECORD + ".tmp")
        with open(temporary, "w") as out:
            json.dump({"key": key, "objects": objects}, out)
        os.replace(temporary, os.path.join(directory, JIT_BUILD_RECORD))
    return True


def wait_for_gpu_kernel():
    # Where a real wedge sits: a kernel or collective that never completes.
    threading.Event().wait()


PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


def send_body(handler, status, body, content_type="application/json"):
    """One HTTP answer from a BaseHTTPRequestHandler: `body` as JSON unless it is bytes already,
    with its length, so a keep-alive client reads exactly it."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def prometheus(samples):
    """Prometheus text exposition (version 0.0.4) of [(name, type, help, labels, value)]."""
    lines = []
    described = set()
    for name, kind, help_text, labels, value in samples:
        label_text = ",".join(f'{key}="{val}"' for key, val in labels.items())
        if name not in described:  # once per family, its samples below
            described.add(name)
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} {kind}")
        lines.append(f"{name}{{{label_text}}} {float(value)}")
    return ("\n".join(lines) + "\n").encode()
