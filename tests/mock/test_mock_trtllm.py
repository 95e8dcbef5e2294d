# SPDX-License-Identifier: Apache-2.0
"""Tests for the mock trtllm-serve (mock/trtllm/trtllm_serve.py): only trtllm-serve's options,
/health_generate as a chat completion (500 without a chat template, queued behind a saturated
batch), /v1/completions needing `model` and no template, and /metrics' iteration statistics only
with enable_iter_perf_stats.
Run: /usr/bin/python3 -m unittest tests/mock/test_mock_trtllm.py
"""

import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_venv import MockVenvTestCase, free_port, http_get  # noqa: E402


class MockTrtllmTest(MockVenvTestCase):
    def start(self, *flags, **env):
        port = free_port()
        environment = dict(os.environ, HOME=self.tmp, MOCK_TRTLLM_LOAD_SECONDS="0.2", **env)
        proc = subprocess.Popen([os.path.join(self.venv, "bin", "trtllm-serve"), "/m", "--host",
                                 "127.0.0.1", "--port", str(port), "--backend", "pytorch",
                                 *flags], env=environment, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if http_get(f"http://127.0.0.1:{port}/health")[0] == 200:
                return f"http://127.0.0.1:{port}"
            time.sleep(0.05)
        self.fail("trtllm-serve never answered /health")

    def completion(self, base, body, timeout=2.0):
        return http_get(base + "/v1/completions", timeout=timeout, data=json.dumps(body).encode())

    def test_refuses_an_option_trtllm_serve_does_not_know(self):
        done = subprocess.run([os.path.join(self.venv, "bin", "trtllm-serve"), "/m",
                               "--tensor-parallel-size", "2"], env=dict(os.environ, HOME=self.tmp),
                              capture_output=True, text=True, timeout=10)
        self.assertEqual(done.returncode, 2)
        self.assertIn("Error: No such option: --tensor-parallel-size", done.stderr)

    def test_health_generate_fails_without_a_chat_template_and_completions_do_not(self):
        base = self.start(MOCK_TRTLLM_CHAT_TEMPLATE="0")
        self.assertEqual(http_get(base + "/health_generate", timeout=3)[0], 500)
        self.assertEqual(self.completion(base, {"prompt": "hi", "max_tokens": 1})[0], 400)
        status, body = self.completion(base, {"model": "/m", "prompt": "hi", "max_tokens": 1})
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["usage"]["completion_tokens"], 1)

    def test_a_probe_waits_behind_a_saturated_batch(self):
        base = self.start("--max_batch_size", "2", MOCK_BACKGROUND_REQUESTS="2",
                          MOCK_SLOW_SECONDS="3")
        time.sleep(0.3)
        self.assertIsNone(http_get(base + "/health_generate", timeout=1.0)[0])
        self.assertIsNone(self.completion(base, {"model": "/m", "prompt": "hi", "max_tokens": 1},
                                          timeout=1.0)[0])
        status, _ = self.completion(base, {"model": "/m", "prompt": "hi", "max_tokens": 1},
                                    timeout=8.0)
        self.assertEqual(status, 200)

    def test_iteration_statistics_only_with_enable_iter_perf_stats(self):
        base = self.start(MOCK_BACKGROUND_REQUESTS="1")
        time.sleep(0.3)
        self.assertEqual(json.loads(http_get(base + "/metrics")[1]), [])
        options = os.path.join(self.tmp, "extra.yml")
        with open(options, "w", encoding="utf-8") as out:
            out.write("enable_iter_perf_stats: true\n")
        base = self.start("--extra_llm_api_options", options, MOCK_BACKGROUND_REQUESTS="1")
        time.sleep(0.3)
        stats = json.loads(http_get(base + "/metrics")[1])
        self.assertTrue(stats)
        self.assertEqual(stats[-1]["numActiveRequests"], 1)
        self.assertGreater(stats[-1]["iter"], stats[0]["iter"] - 1)
        # A read drains them: the next one has only the iterations since.
        again = json.loads(http_get(base + "/metrics")[1])
        self.assertTrue(all(entry["iter"] > stats[-1]["iter"] for entry in again))


if __name__ == "__main__":
    unittest.main()
