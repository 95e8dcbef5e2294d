# SPDX-License-Identifier: Apache-2.0
"""Tests for the mock engines' SIGTERM (mock/common/mock_scheduler.py install_sigterm), what a
stop's drain meets: vLLM with --shutdown-timeout refuses new requests with 503, finishes those in
flight within its bound and exits 0, aborting what is left at the bound; without it, it exits at
once; SGLang drains without a bound, still serving what arrives meanwhile; a wedged one exits at once; MOCK_SIGTERM=ignore keeps serving. Each records what it saw.
Run: /usr/bin/python3 -m unittest tests/mock/test_mock_drain.py
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


class MockDrainTest(MockVenvTestCase):
    def start(self, engine, *flags, **env):
        port = free_port()
        self.report = os.path.join(self.tmp, f"drain-{port}.json")
        environment = dict(os.environ, HOME=self.tmp, MOCK_SGLANG_LOAD_SECONDS="0.2",
                           MOCK_VLLM_LOAD_SECONDS="0.2", MOCK_DRAIN_REPORT=self.report,
                           MOCK_DRAIN_POLL_SECONDS="0.2", **env)
        if engine == "sglang":
            argv = [os.path.join(self.venv, "bin", "sglang"), "serve", "--model-path", "/m",
                    "--port", str(port), *flags]
            self.path, body = "/generate", {"text": "s", "sampling_params": {"max_new_tokens": 1}}
        else:
            argv = [os.path.join(self.venv, "bin", "vllm"), "serve", "/m", "--host", "127.0.0.1",
                    "--port", str(port), *flags]
            self.path, body = "/v1/completions", {"prompt": "s", "max_tokens": 1}
        self.body = json.dumps(body).encode()
        self.port = port
        proc = subprocess.Popen(argv, env=environment, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if http_get(f"http://127.0.0.1:{port}/health")[0] == 200:
                return proc
            time.sleep(0.05)
        self.fail(f"{engine} never answered /health")

    def request(self, timeout=10.0):
        return http_get(f"http://127.0.0.1:{self.port}{self.path}", timeout=timeout,
                        data=self.body)[0]

    def in_flight_then_sigterm(self, proc):
        """One request in flight when SIGTERM arrives; its status once it ends."""
        answers = []
        client = threading.Thread(target=lambda: answers.append(self.request()))
        client.start()
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        return client, answers

    def drain_report(self):
        with open(self.report, encoding="utf-8") as f:
            return json.load(f)

    def test_vllm_with_a_shutdown_timeout_finishes_what_is_in_flight_and_refuses_the_rest(self):
        proc = self.start("vllm", "--shutdown-timeout", "10", MOCK_SLOW_SECONDS="2")
        client, answers = self.in_flight_then_sigterm(proc)
        self.assertEqual(self.request(), 503)  # new requests while draining
        client.join(10)
        self.assertEqual(answers, [200])
        self.assertEqual(proc.wait(10), 0)
        report = self.drain_report()
        self.assertEqual((report["mode"], report["signal"]), ("drain", signal.SIGTERM))
        self.assertEqual((report["in_flight"], report["finished"], report["aborted"]), (1, 1, 0))
        self.assertGreaterEqual(report["refused"], 1)

    def test_vllm_aborts_what_outlives_its_bound(self):
        proc = self.start("vllm", "--shutdown-timeout", "1", MOCK_SLOW_SECONDS="30")
        started = time.monotonic()
        self.in_flight_then_sigterm(proc)
        self.assertEqual(proc.wait(10), 0)
        self.assertLess(time.monotonic() - started, 5)
        report = self.drain_report()
        self.assertEqual((report["in_flight"], report["finished"], report["aborted"]), (1, 0, 1))

    def test_vllm_without_a_shutdown_timeout_exits_at_once(self):
        proc = self.start("vllm", MOCK_SLOW_SECONDS="30")
        started = time.monotonic()
        self.in_flight_then_sigterm(proc)
        self.assertEqual(proc.wait(5), 0)
        self.assertLess(time.monotonic() - started, 3)
        self.assertEqual(self.drain_report()["mode"], "abort")

    def test_sglang_drains_without_a_bound(self):
        proc = self.start("sglang", MOCK_SLOW_SECONDS="2")
        client, answers = self.in_flight_then_sigterm(proc)
        # SGLang's drain only waits: a request that arrives meanwhile is still served.
        self.assertEqual(self.request(), 200)
        client.join(10)
        self.assertEqual(answers, [200])
        self.assertEqual(proc.wait(10), 0)
        report = self.drain_report()
        self.assertEqual((report["mode"], report["bound"], report["refused"]), ("drain", None, 0))
        self.assertGreaterEqual(report["finished"], 1)

    def test_a_wedged_engine_exits_at_once(self):
        proc = self.start("sglang", MOCK_WEDGE_AFTER="0.2")
        time.sleep(0.5)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(5), 0)
        self.assertLess(time.monotonic() - started, 2)
        report = self.drain_report()
        self.assertTrue(report["wedged"])
        self.assertGreaterEqual(report["aborted"], 1)

    def test_an_engine_that_ignores_sigterm_keeps_serving(self):
        proc = self.start("sglang", MOCK_SIGTERM="ignore")
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        self.assertIsNone(proc.poll())
        self.assertEqual(self.request(), 200)
        self.assertEqual(self.drain_report()["mode"], "ignore")


if __name__ == "__main__":
    unittest.main()
