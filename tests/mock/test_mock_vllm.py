# SPDX-License-Identifier: Apache-2.0
"""Tests for the mock vLLM (mock/vllm). Run: /usr/bin/python3 -m unittest tests/mock/test_mock_vllm.py

Installs the mocks into a fresh venv with mock/install.sh (offline), then drives `VENV/bin/vllm
serve ...` as gpulaunch's units do: flags as vLLM spells them, a two-node group on loopback (rank 0
serving, rank 1 headless) and data parallel over two "nodes".
"""

import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_venv import MockVenvTestCase, free_port, http_get  # noqa: E402


class MockVllmTest(MockVenvTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.vllm = os.path.join(cls.venv, "bin", "vllm")

    def argv_file(self, rank):
        return os.path.join(self.tmp, f"argv-{self.id().rsplit('.', 1)[-1]}-{rank}.json")

    def start(self, *flags, rank=0):
        env = dict(os.environ, MOCK_VLLM_ARGV_FILE=self.argv_file(rank), MOCK_VLLM_LOAD_SECONDS="0.4")
        proc = subprocess.Popen([self.vllm, "serve", *flags], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def wait_health(self, port, deadline_s=15):
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            status, _ = http_get(f"http://127.0.0.1:{port}/health")
            if status == 200:
                return True
            time.sleep(0.1)
        return False

    def recorded(self, rank):
        with open(self.argv_file(rank), encoding="utf-8") as f:
            return json.load(f)

    def test_serves_health_models_and_completions_with_the_served_name(self):
        port = free_port()
        self.start("/models/m", "--tensor-parallel-size", "1", "--host", "127.0.0.1", "--port",
                   str(port), "--served-model-name", "mock-model", "--gpu-memory-utilization",
                   "0.92", "--max-num-seqs", "256")
        self.assertTrue(self.wait_health(port))
        status, body = http_get(f"http://127.0.0.1:{port}/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["data"][0]["id"], "mock-model")
        status, body = http_get(f"http://127.0.0.1:{port}/v1/completions",
                                data=json.dumps({"model": "mock-model", "prompt": "hi"}).encode())
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["object"], "text_completion")

    def test_a_share_above_mock_oom_above_runs_out_of_memory_until_it_is_lowered(self):
        # Unset, the share is CacheConfig's default (0.92): above 0.9, the CUDA OOM at every start.
        os.environ["MOCK_OOM_ABOVE"] = "0.9"
        try:
            proc = self.start("/models/m", "--port", str(free_port()))
            _, err = proc.communicate(timeout=20)
            self.assertEqual(proc.returncode, 1)
            self.assertIn("torch.OutOfMemoryError: CUDA out of memory.", err)
            port = free_port()
            self.start("/models/m", "--port", str(port), "--gpu-memory-utilization", "0.87")
            self.assertTrue(self.wait_health(port))
        finally:
            del os.environ["MOCK_OOM_ABOVE"]

    def test_records_its_argv_as_the_unit_ran_it(self):
        port = free_port()
        self.start("/models/m", "--port", str(port), "--host", "127.0.0.1")
        self.assertTrue(self.wait_health(port))
        self.assertEqual(self.recorded(0),
                         [self.vllm, "serve", "/models/m", "--port", str(port), "--host", "127.0.0.1"])

    def test_refuses_unknown_flags_and_prefixes_as_argparse_does(self):
        for flags in (["--tp", "2"], ["--tensor-parallel", "2"], ["--mem-fraction-static", "0.8"],
                      ["--dist-init-addr", "10.0.0.1:5000"]):
            with self.subTest(flags=flags):
                proc = self.start("/models/m", *flags)
                _, err = proc.communicate(timeout=20)
                self.assertEqual(proc.returncode, 2)
                self.assertIn("unrecognized arguments", err)

    def test_takes_vllms_short_and_snake_case_spellings(self):
        port = free_port()
        self.start("/models/m", "-tp", "1", "--max_num_seqs", "8", "--port", str(port), "--host",
                   "127.0.0.1", "--trust-remote-code", "--no-enable-prefix-caching")
        self.assertTrue(self.wait_health(port))

    def test_headless_with_an_api_server_count_is_refused_as_serve_py_does(self):
        proc = self.start("/models/m", "--headless", "--api-server-count", "1",
                          "--data-parallel-size-local", "1")
        _, err = proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("cannot be used with --headless", err)

    def test_a_two_node_group_serves_on_rank_zero_once_the_headless_rank_joined(self):
        master, port = free_port(), free_port()
        common = ["/models/m", "--tensor-parallel-size", "2", "--nnodes", "2", "--master-addr",
                  "127.0.0.1", "--master-port", str(master), "--host", "127.0.0.1", "--port",
                  str(port)]
        self.start(*common, "--node-rank", "0", rank=0)
        time.sleep(1.5)
        # Rank 0 waits for its peer: no HTTP server yet.
        self.assertEqual(http_get(f"http://127.0.0.1:{port}/health")[0], None)
        headless = self.start(*common, "--node-rank", "1", "--headless", rank=1)
        self.assertTrue(self.wait_health(port))
        self.assertIsNone(headless.poll())
        self.assertIn("--headless", self.recorded(1))
        # Rank 0 goes away: the headless rank's group is gone, and so is it.
        self.procs[0].kill()
        self.procs[0].wait()
        self.assertEqual(headless.wait(timeout=10), 1)
        self.assertIn("lost the connection to rank 0", headless.stderr.read())

    def test_data_parallel_over_two_nodes_joins_on_the_rpc_port(self):
        rpc, port = free_port(), free_port()
        common = ["/models/m", "--data-parallel-size", "4", "--data-parallel-size-local", "2",
                  "--data-parallel-address", "127.0.0.1", "--data-parallel-rpc-port", str(rpc),
                  "--host", "127.0.0.1", "--port", str(port)]
        self.start(*common, rank=0)
        headless = self.start(*common, "--data-parallel-start-rank", "2", "--headless", rank=1)
        self.assertTrue(self.wait_health(port))
        self.assertIsNone(headless.poll())


if __name__ == "__main__":
    unittest.main()
