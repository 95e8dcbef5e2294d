# SPDX-License-Identifier: Apache-2.0
"""Tests for the mock llama-server (mock/llamacpp/llama_server.py): only llama.cpp's flags, its
slots with the deferred queue behind them (a probe waits while the decode counter moves), /metrics
only with --metrics, and the API key in each of its forms guarding every path but health and the
model list, /metrics included.
Run: /usr/bin/python3 -m unittest tests/mock/test_mock_llamacpp.py
"""

import json
import os
import subprocess
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_venv import MockVenvTestCase, free_port, http_get  # noqa: E402


def metric(text, name):
    values = [float(line.rsplit(" ", 1)[1]) for line in text.decode().splitlines()
              if line.startswith(name + "{") or line.startswith(name + " ")]
    return sum(values) if values else None


def request(url, data=None, key=None, timeout=2.0):
    """(status, body) with an optional bearer key; (None, b"") when nothing answered in time."""
    req = urllib.request.Request(url, data=data)
    if key:
        req.add_header("Authorization", "Bearer " + key)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return None, b""


class MockLlamacppTest(MockVenvTestCase):
    def start(self, *flags, **env):
        port = free_port()
        environment = dict(os.environ, HOME=self.tmp, MOCK_LLAMACPP_LOAD_SECONDS="0.2", **env)
        environment.pop("LLAMA_API_KEY", None)
        environment.update(env)
        proc = subprocess.Popen([os.path.join(self.venv, "bin", "llama-server"), "--model",
                                 "/models/q.gguf", "--host", "127.0.0.1", "--port", str(port),
                                 *flags], env=environment, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if http_get(f"http://127.0.0.1:{port}/health")[0] == 200:
                return f"http://127.0.0.1:{port}"
            time.sleep(0.05)
        self.fail("llama-server never answered /health")

    def completion(self, base, key=None, timeout=2.0):
        return request(base + "/completion", json.dumps({"prompt": "hi", "n_predict": 1}).encode(),
                       key, timeout)

    def test_refuses_a_flag_llama_cpp_does_not_know(self):
        for flag in ("--api-key=x", "--tp", "--enable-metrics"):
            done = subprocess.run([os.path.join(self.venv, "bin", "llama-server"), flag, "x"],
                                  env=dict(os.environ, HOME=self.tmp), capture_output=True,
                                  text=True, timeout=10)
            self.assertEqual(done.returncode, 1, flag)
            self.assertIn(f"error: invalid argument: {flag}", done.stderr)

    def test_metrics_only_with_the_flag(self):
        base = self.start()
        self.assertEqual(http_get(base + "/metrics")[0], 501)
        base = self.start("--metrics")
        status, body = http_get(base + "/metrics")
        self.assertEqual(status, 200)
        self.assertEqual(metric(body, "llamacpp:requests_processing"), 0)

    def test_a_completion_beyond_the_slots_waits_while_the_decode_counter_moves(self):
        # Two slots, both held by long generations: the probe is deferred, yet decoding goes on.
        base = self.start("--metrics", "--parallel", "2", MOCK_BACKGROUND_REQUESTS="2",
                          MOCK_SLOW_SECONDS="3")
        time.sleep(0.3)
        before = metric(http_get(base + "/metrics")[1], "llamacpp:n_decode_total")
        started = time.monotonic()
        status, _ = self.completion(base, timeout=1.0)
        self.assertIsNone(status, "a completion with every slot busy answered at once")
        page = http_get(base + "/metrics")[1]
        self.assertEqual(metric(page, "llamacpp:requests_processing"), 2)
        self.assertGreaterEqual(metric(page, "llamacpp:requests_deferred"), 1)
        self.assertGreater(metric(page, "llamacpp:n_decode_total"), before)
        # Once a slot frees, the deferred completion runs.
        status, body = self.completion(base, timeout=8.0)
        self.assertEqual(status, 200)
        self.assertGreater(time.monotonic() - started, 1.0)
        self.assertEqual(json.loads(body)["tokens_predicted"], 1)

    def test_a_wedge_stops_the_decode_counter_with_requests_processing(self):
        base = self.start("--metrics", MOCK_WEDGE_AFTER="0.3")
        time.sleep(0.8)
        first = metric(http_get(base + "/metrics")[1], "llamacpp:n_decode_total")
        time.sleep(0.5)
        page = http_get(base + "/metrics")[1]
        self.assertEqual(metric(page, "llamacpp:n_decode_total"), first)
        self.assertGreater(metric(page, "llamacpp:requests_processing"), 0)
        self.assertEqual(http_get(base + "/health")[0], 200)
        self.assertIsNone(self.completion(base, timeout=1.0)[0])

    def test_each_form_of_the_key_guards_completion_and_metrics_not_health(self):
        key_file = os.path.join(self.tmp, "keys")
        with open(key_file, "w", encoding="utf-8") as out:
            out.write("from-file\nsecond\n")
        for flags, env, key in [(("--api-key", "flag-key"), {}, "flag-key"),
                                (("--api_key", "flag-key"), {}, "flag-key"),
                                (("--api-key-file", key_file), {}, "second"),
                                (("--api_key_file", key_file), {}, "from-file"),
                                ((), {"LLAMA_API_KEY": "env-key"}, "env-key")]:
            with self.subTest(flags=flags, env=env):
                base = self.start("--metrics", *flags, **env)
                self.assertEqual(http_get(base + "/health")[0], 200)
                self.assertEqual(http_get(base + "/v1/models")[0], 200)
                self.assertEqual(self.completion(base)[0], 401)
                self.assertEqual(http_get(base + "/metrics")[0], 401)
                self.assertEqual(self.completion(base, key=key)[0], 200)
                self.assertEqual(request(base + "/metrics", key=key)[0], 200)
                self.assertEqual(self.completion(base, key="wrong")[0], 401)


if __name__ == "__main__":
    unittest.main()
