# SPDX-License-Identifier: Apache-2.0
"""Tests for the mock engines' forward progress (mock/common/mock_scheduler.py), what gpulaunch's
liveness reads: Prometheus /metrics under the engines' own names, one-token generations through
each engine's API, the wedge (/health 200 while generation hangs and the token counter stops,
every thread in faulthandler's dump on SIGABRT), a slow engine whose counter keeps moving, and one
that answers /health before it can generate.
Run: /usr/bin/python3 -m unittest tests/mock/test_mock_liveness.py
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_venv import MockVenvTestCase, free_port, http_get  # noqa: E402


def metric(text, name):
    """The sum of the samples of `name` in Prometheus text (every label set), or None."""
    values = [float(line.rsplit(" ", 1)[1]) for line in text.decode().splitlines()
              if line.startswith(name + "{") or line.startswith(name + " ")]
    return sum(values) if values else None


class MockLivenessTest(MockVenvTestCase):
    def start(self, engine, port, *flags, **env):
        environment = dict(os.environ, HOME=self.tmp, MOCK_SGLANG_LOAD_SECONDS="0.2",
                           MOCK_VLLM_LOAD_SECONDS="0.2", PYTHONFAULTHANDLER="1", **env)
        if engine == "sglang":
            argv = [os.path.join(self.venv, "bin", "sglang"), "serve", "--model-path", "/m",
                    "--port", str(port), *flags]
        else:
            argv = [os.path.join(self.venv, "bin", "vllm"), "serve", "/m", "--host", "127.0.0.1",
                    "--port", str(port), *flags]
        proc = subprocess.Popen(argv, env=environment, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if http_get(f"http://127.0.0.1:{port}/health")[0] == 200:
                return proc
            time.sleep(0.05)
        self.fail(f"{engine} never answered /health")

    @staticmethod
    def wait_for_quiet_threads(proc, settle=0.3, limit=5.0):
        """Until the process's thread count has held for `settle` seconds (at most `limit`)."""
        tasks = f"/proc/{proc.pid}/task"
        deadline = time.monotonic() + limit
        count, since = len(os.listdir(tasks)), time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - since < settle:
            time.sleep(0.05)
            now = len(os.listdir(tasks))
            if now != count:
                count, since = now, time.monotonic()

    def generate(self, engine, port, timeout=2.0):
        """One token through the engine's own generation API: (status, completion tokens)."""
        if engine == "sglang":
            status, body = http_get(f"http://127.0.0.1:{port}/generate", timeout=timeout,
                                    data=json.dumps({"text": "s", "sampling_params": {
                                        "max_new_tokens": 1, "temperature": 0}}).encode())
            tokens = json.loads(body)["meta_info"]["completion_tokens"] if status == 200 else None
        else:
            status, body = http_get(f"http://127.0.0.1:{port}/v1/completions", timeout=timeout,
                                    data=json.dumps({"prompt": "s", "max_tokens": 1}).encode())
            tokens = json.loads(body)["usage"]["completion_tokens"] if status == 200 else None
        return status, tokens

    def metrics(self, engine, port):
        status, body = http_get(f"http://127.0.0.1:{port}/metrics")
        self.assertEqual(status, 200)
        if engine == "sglang":
            # The scheduler's live counter: generation_tokens_total moves only as requests end.
            return (metric(body, "sglang:num_running_reqs"),
                    metric(body, "sglang:realtime_tokens_total"))
        return metric(body, "vllm:num_requests_running"), metric(body, "vllm:generation_tokens_total")

    def test_metrics_and_one_token_generations_as_the_engines_serve_them(self):
        for engine, flags in (("vllm", ()), ("sglang", ("--enable-metrics",))):
            with self.subTest(engine=engine):
                port = free_port()
                self.start(engine, port, *flags)
                running, before = self.metrics(engine, port)
                self.assertEqual(running, 0.0)
                self.assertEqual(self.generate(engine, port), (200, 1))
                # vLLM's counter: the one token; SGLang's realtime counter: its prefill and decode.
                self.assertEqual(self.metrics(engine, port)[1],
                                 before + (1 if engine == "vllm" else 2))
                status, body = http_get(f"http://127.0.0.1:{port}/metrics")
                self.assertIn(b"# TYPE " + engine.encode() + b":generation_tokens_total counter",
                              body)
        # SGLang serves /metrics only with --enable-metrics; its /health_generate generates.
        port = free_port()
        self.start("sglang", port)
        self.assertEqual(http_get(f"http://127.0.0.1:{port}/metrics")[0], 404)
        self.assertEqual(http_get(f"http://127.0.0.1:{port}/health_generate", timeout=5)[0], 200)
        status, _ = http_get(f"http://127.0.0.1:{port}/generate", data=b"{}")
        self.assertEqual(status, 400)

    def test_a_wedge_keeps_health_while_generation_hangs_and_tokens_stop(self):
        for engine, flags in (("vllm", ()), ("sglang", ("--enable-metrics",))):
            with self.subTest(engine=engine):
                port = free_port()
                proc = self.start(engine, port, *flags, MOCK_WEDGE_AFTER="0.5",
                                  SGLANG_HEALTH_CHECK_TIMEOUT="1")
                self.assertEqual(self.generate(engine, port), (200, 1))
                time.sleep(1.0)
                self.assertEqual(http_get(f"http://127.0.0.1:{port}/health")[0], 200)
                self.assertEqual(self.generate(engine, port, timeout=1.5), (None, None))
                running, tokens = self.metrics(engine, port)
                self.assertGreaterEqual(running, 2)
                time.sleep(0.5)
                self.assertEqual(self.metrics(engine, port), (running, tokens))
                if engine == "sglang":
                    self.assertEqual(
                        http_get(f"http://127.0.0.1:{port}/health_generate", timeout=5)[0], 503)
                # PYTHONFAULTHANDLER=1: SIGABRT dumps every thread, the wedged ones included.
                # The dump walks the thread list without a lock, so a thread still being torn
                # down (the /metrics handler that just answered) can make it fault (CPython's
                # faulthandler docs: the dump is best effort). gpulaunch reads the stall from its
                # own journal line, not this exit status; the test waits for the handlers to end.
                self.wait_for_quiet_threads(proc)
                proc.send_signal(signal.SIGABRT)
                _, stderr = proc.communicate(timeout=10)
                self.assertEqual(proc.returncode, -signal.SIGABRT)
                self.assertIn("Fatal Python error: Aborted", stderr)
                self.assertIn("(most recent call first):", stderr)
                self.assertRegex(stderr, r"Thread 0x[0-9a-f]+ \(most recent call first\)")
                self.assertIn("in wait_for_gpu_kernel", stderr)

    def test_a_slow_engine_keeps_its_token_counter_moving(self):
        port = free_port()
        self.start("vllm", port, MOCK_SLOW_SECONDS="1.5", MOCK_BACKGROUND_REQUESTS="1")
        running, before = self.metrics("vllm", port)
        self.assertGreaterEqual(running, 1)
        started = time.monotonic()
        self.assertEqual(self.generate("vllm", port, timeout=5)[0], 200)
        self.assertGreaterEqual(time.monotonic() - started, 1.4)
        self.assertGreater(self.metrics("vllm", port)[1], before + 10)

    def test_a_capped_batch_queues_the_rest_while_its_tokens_move(self):
        # SGLang's --max-running-requests, vLLM's --max-num-seqs: one runs, two wait.
        for engine, flags, waiting_name in (
                ("vllm", ("--max-num-seqs", "1"), "vllm:num_requests_waiting"),
                ("sglang", ("--enable-metrics", "--max-running-requests", "1"),
                 "sglang:num_queue_reqs")):
            with self.subTest(engine=engine):
                port = free_port()
                self.start(engine, port, *flags)
                path = "/v1/completions"
                clients = [threading.Thread(target=http_get, kwargs={
                    "url": f"http://127.0.0.1:{port}{path}", "timeout": 10,
                    "data": json.dumps({"prompt": "s", "max_tokens": 40}).encode()})
                    for _ in range(3)]
                for client in clients:
                    client.start()
                time.sleep(0.5)
                running, before = self.metrics(engine, port)
                status, body = http_get(f"http://127.0.0.1:{port}/metrics")
                self.assertEqual(running, 1.0)
                self.assertEqual(metric(body, waiting_name), 2.0)
                time.sleep(0.3)
                self.assertGreater(self.metrics(engine, port)[1], before)
                for client in clients:
                    client.join()
                self.assertEqual(self.metrics(engine, port)[0], 0.0)

    def test_generation_can_fail_for_a_while_after_health_answers(self):
        for engine in ("vllm", "sglang"):
            with self.subTest(engine=engine):
                port = free_port()
                self.start(engine, port, MOCK_GENERATE_FAILS_FOR="1.5")
                self.assertEqual(self.generate(engine, port)[0], 503)
                time.sleep(1.6)
                self.assertEqual(self.generate(engine, port), (200, 1))


if __name__ == "__main__":
    unittest.main()


class MockSilentJitTest(MockVenvTestCase):
    """MOCK_JIT_GROW_*: a first-use JIT build after the weights that prints nothing while its
    cache grows (or, at 0 KiB/s, does not)."""

    def serve_after_silent_jit(self, seconds, rate, key="mock", workspace=None):
        port = free_port()
        workspace = workspace or os.path.join(self.tmp, "flashinfer")
        environment = dict(os.environ, HOME=self.tmp, MOCK_SGLANG_LOAD_SECONDS="0.2",
                           MOCK_JIT_GROW_SECONDS=str(seconds), MOCK_JIT_GROW_KIB_PER_SECOND=rate,
                           FLASHINFER_WORKSPACE_BASE=workspace, MOCK_JIT_KEY=key)
        argv = [os.path.join(self.venv, "bin", "sglang"), "serve", "--model-path", "/m", "--port",
                str(port)]
        proc = subprocess.Popen(argv, env=environment, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        self.procs.append(proc)
        lines = []
        while True:
            line = proc.stdout.readline()
            self.assertTrue(line, "the mock ended before serving")
            lines.append((time.monotonic(), line))
            if "fired up and ready to roll" in line:
                break
        return workspace, lines

    def quiet_seconds_after_weights(self, lines):
        ends = [i for i, (_, line) in enumerate(lines) if "Load weight end" in line][0]
        return lines[ends + 1][0] - lines[ends][0]

    def test_the_cache_grows_while_nothing_is_printed(self):
        workspace, lines = self.serve_after_silent_jit(2, "256")
        self.assertGreaterEqual(self.quiet_seconds_after_weights(lines), 1.8)
        written = sum(os.path.getsize(os.path.join(root, name))
                      for root, _, names in os.walk(workspace) for name in names)
        self.assertGreaterEqual(written, 256 * 1024)

    def test_a_finished_build_is_not_compiled_again_for_the_same_key(self):
        workspace = os.path.join(self.tmp, "flashinfer-reused")
        _, lines = self.serve_after_silent_jit(1.5, "64", workspace=workspace)
        self.assertGreaterEqual(self.quiet_seconds_after_weights(lines), 1.4)
        self.stop_all()
        _, again = self.serve_after_silent_jit(1.5, "64", workspace=workspace)
        self.assertLess(self.quiet_seconds_after_weights(again), 0.5)
        self.stop_all()
        # Built for something else, or missing an object: compiled again.
        _, other = self.serve_after_silent_jit(1.5, "64", key="other", workspace=workspace)
        self.assertGreaterEqual(self.quiet_seconds_after_weights(other), 1.4)
        self.stop_all()
        ops = os.path.join(workspace, ".cache", "flashinfer", "mock-jit", "cached_ops")
        os.remove(os.path.join(ops, "kernel_1.o"))
        _, partial = self.serve_after_silent_jit(1.5, "64", key="other", workspace=workspace)
        self.assertGreaterEqual(self.quiet_seconds_after_weights(partial), 1.4)

    def stop_all(self):
        for proc in self.procs:
            proc.terminate()
            proc.wait(timeout=10)
        self.procs.clear()

    def test_at_zero_rate_nothing_is_written_either(self):
        workspace, lines = self.serve_after_silent_jit(1, "0")
        self.assertGreaterEqual(self.quiet_seconds_after_weights(lines), 0.9)
        self.assertFalse(os.path.exists(workspace))
