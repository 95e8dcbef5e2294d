# SPDX-License-Identifier: Apache-2.0
"""Tests for the mock SGLang (mock/). Run: /usr/bin/python3 -m unittest tests/mock/test_mock_sglang.py

Installs the mock into a fresh venv with mock/install.sh (offline), then drives
`VENV/bin/python -m sglang.launch_server` and `VENV/bin/sglang serve` as gpulaunch's units would.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_venv import MockVenvTestCase, free_port, http_get  # noqa: E402


class MockSglangTest(MockVenvTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.python = os.path.join(cls.venv, "bin", "python")

    def setUp(self):
        super().setUp()
        self.argv_file = os.path.join(self.tmp, f"argv-{self.id().rsplit('.', 1)[-1]}.json")

    def start(self, *flags, mode=None, load="1.5", extra_env=None, launcher=None):
        env = dict(os.environ, MOCK_SGLANG_ARGV_FILE=self.argv_file, MOCK_SGLANG_LOAD_SECONDS=load)
        env.pop("MOCK_SGLANG_MODE", None)
        env.pop("MOCK_SGLANG_MODE_FILE", None)
        if mode:
            env["MOCK_SGLANG_MODE"] = mode
        env.update(extra_env or {})
        launcher = launcher or [self.python, "-m", "sglang.launch_server"]
        proc = subprocess.Popen([*launcher, *flags], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        return proc

    def wait_status(self, url, want, deadline_s):
        deadline = time.monotonic() + deadline_s
        seen = []
        while time.monotonic() < deadline:
            status, _ = http_get(url, timeout=0.5)
            if status is not None and (not seen or seen[-1] != status):
                seen.append(status)
            if status == want:
                return seen
            time.sleep(0.05)
        self.fail(f"{url} never answered {want}; saw {seen}")

    def test_unknown_flag_is_rejected_like_argparse(self):
        for flags in (["--model-path", "m", "--mock-mode", "x"],
                      ["--model-path", "m", "--tp", "2"]):  # no prefix matching
            proc = self.start(*flags)
            out, err = proc.communicate(timeout=20)
            self.assertEqual(proc.returncode, 2, err)
            self.assertIn("usage: launch_server.py", err)
            self.assertIn("error: unrecognized arguments", err)
            self.assertEqual(out, "")

    def test_health_503_then_200_and_argv_recorded(self):
        port = free_port()
        flags = ["--model-path", "/models/naïve 模型", "--tensor-parallel-size", "2",
                 "--pipeline-parallel-size", "1", "--expert-parallel-size", "1",
                 "--data-parallel-size", "1", "--enable-dp-attention", "--host", "127.0.0.1",
                 "--port", str(port), "--served-model-name", "demo", "--revision", "main",
                 "--nnodes", "1", "--node-rank", "0", "--dist-init-addr", "10.0.0.1:5000",
                 "--mem-fraction-static", "0.85", "--max-running-requests", "64",
                 "--cuda-graph-max-bs", "32", "--speculative-algorithm", "EAGLE3",
                 "--speculative-draft-model-path", "/d", "--speculative-num-steps", "3",
                 "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
                 "--trust-remote-code"]
        proc = self.start(*flags, load="3")
        base = f"http://127.0.0.1:{port}"
        seen = self.wait_status(base + "/health", 503, 15)
        self.assertEqual(seen, [503])
        self.assertEqual(http_get(base + "/health_generate")[0], 503)
        self.assertEqual(self.wait_status(base + "/health", 200, 20)[-2:], [503, 200])
        self.assertEqual(http_get(base + "/health_generate")[0], 200)
        status, body = http_get(base + "/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual([m["id"] for m in json.loads(body)["data"]], ["demo"])
        status, body = http_get(base + "/v1/completions", data=b'{"prompt": "hi", "max_tokens": 2}')
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["object"], "text_completion")
        with open(self.argv_file, encoding="utf-8") as f:
            recorded = json.load(f)
        self.assertEqual(recorded, [self.python, "-m", "sglang.launch_server", *flags])
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
        self.assertEqual(proc.returncode, 0)
        self.assertIn("Loading safetensors checkpoint shards:  50% Completed | 4/8", out)
        self.assertIn("The server is fired up and ready to roll!", out)

    def test_tqdm_progress_is_carriage_return_updates_on_stderr(self):
        port = free_port()
        proc = self.start("--model-path", "m", "--port", str(port), load="0.8",
                          extra_env={"MOCK_SGLANG_PROGRESS": "tqdm"})
        self.wait_status(f"http://127.0.0.1:{port}/health", 200, 20)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        # The raw bytes: text mode would turn each "\r" into a newline.
        out = proc.stdout.buffer.read().decode()
        err = proc.stderr.buffer.read().decode()
        self.assertNotIn("checkpoint shards", out)
        # As tqdm writes it: each update led by "\r", one newline after the last.
        bar = err[err.index("\rMulti-thread loading shards:"):]
        updates = bar[:bar.index("\n")].split("\r")[1:]
        self.assertEqual(len(updates), 9)
        self.assertTrue(updates[0].startswith("Multi-thread loading shards:   0% Completed | 0/8 "))
        self.assertTrue(updates[2].startswith("Multi-thread loading shards:  25% Completed | 2/8 "))
        self.assertTrue(updates[8].startswith("Multi-thread loading shards: 100% Completed | 8/8 "))
    def test_sglang_serve_runs_the_same_server_and_records_its_own_argv(self):
        port = free_port()
        script = os.path.join(self.venv, "bin", "sglang")
        flags = ["--model-path", "m", "--port", str(port), "--mem-fraction-static", "0.85"]
        proc = self.start(*flags, launcher=[script, "serve"], load="0.5")
        self.wait_status(f"http://127.0.0.1:{port}/health", 200, 20)
        with open(self.argv_file, encoding="utf-8") as f:
            self.assertEqual(json.load(f), [script, "serve", *flags])  # as gpulaunch's unit has it
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        self.assertEqual(proc.returncode, 0)
        self.assertIn("The server is fired up and ready to roll!", out)
        self.assertNotIn("recommended entrypoint", err)

    def test_a_release_before_the_decode_graph_flag_refuses_it(self):
        # The default mock is 0.5.6: --cuda-graph-max-bs-decode came later (catalog FlagVersions).
        proc = self.start("--model-path", "m", "--cuda-graph-max-bs-decode", "80")
        _, err = proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 2, err)
        self.assertIn("error: unrecognized arguments: --cuda-graph-max-bs-decode 80", err)

    def test_sglang_serve_rejects_unknown_flags_and_subcommands(self):
        script = os.path.join(self.venv, "bin", "sglang")
        proc = self.start("--model-path", "m", "--tp", "2", launcher=[script, "serve"])
        _, err = proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 2, err)
        self.assertIn("sglang: error: unrecognized arguments: --tp 2", err)
        proc = self.start("--model-path", "m", launcher=[script, "launch"])
        _, err = proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 2, err)
        self.assertIn("sglang: error: argument subcommand: invalid choice: 'launch'", err)

    def test_launch_server_warns_that_sglang_serve_is_recommended(self):
        port = free_port()
        proc = self.start("--model-path", "m", "--port", str(port), load="0.5")
        self.wait_status(f"http://127.0.0.1:{port}/health", 200, 20)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
        # Real SGLang's words (python/sglang/launch_server.py, sgl-project/sglang 046a9e4).
        self.assertIn("UserWarning: 'python -m sglang.launch_server' is still supported, but "
                      "'sglang serve' is the recommended entrypoint.\n"
                      "  Example: sglang serve --model-path <model> [options]", err)

    def test_compile_deep_gemm_builds_the_kernels_once_then_stops_its_server(self):
        # sglang/compile_deep_gemm.py: the server's flags plus --timeout; its own server on the
        # arguments' port; the finished line; nothing left listening. The build lands in the
        # DeepGEMM cache, and a second run finds it and compiles nothing.
        port = free_port()
        cache = os.path.join(self.tmp, "deep_gemm")
        env = {"MOCK_JIT_GROW_SECONDS": "2", "MOCK_JIT_CACHE_VARIABLE": "DG_JIT_CACHE_DIR",
               "DG_JIT_CACHE_DIR": cache, "MOCK_SGLANG_COMPILE_LINGER": "0"}
        launcher = [self.python, "-m", "sglang.compile_deep_gemm"]
        flags = ["--model-path", "/m", "--port", str(port), "--timeout", "60"]
        took = []
        for _ in range(2):
            began = time.monotonic()
            proc = self.start(*flags, load="0.2", extra_env=env, launcher=launcher)
            out, err = proc.communicate(timeout=60)
            took.append(time.monotonic() - began)
            self.assertEqual(proc.returncode, 0, err)
            self.assertIn("\nDeepGEMM Kernels compilation finished successfully.\n", out)
            self.assertIsNone(http_get(f"http://127.0.0.1:{port}/health", timeout=0.5)[0])
        built = os.path.join(cache, ".cache", "flashinfer", "mock-jit", "cached_ops")
        self.assertIn("mock-jit-build.json", os.listdir(built))
        self.assertGreater(took[0], 2)
        self.assertLess(took[1], took[0] - 1)
        # Not ready within --timeout: upstream's TimeoutError, exit 1.
        proc = self.start(*flags[:-1], "1", load="5", extra_env=env, launcher=launcher)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("TimeoutError: Timeout while waiting for the server to be ready.", err)

    def test_cuda_oom(self):
        proc = self.start("--model-path", "m", "--port", str(free_port()), mode="cuda-oom", load="1")
        out, err = proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("Load weight begin", out)
        self.assertIn("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
                      "GPU 0 has a total capacity of 139.81 GiB of which 1.12 GiB is free.", err)
        self.assertNotIn("fired up", out)

    def test_a_share_above_mock_oom_above_runs_out_of_memory_until_it_is_lowered(self):
        # Unset, the share is SGLang's own where the GPU is unknown (0.95): above 0.9, an OOM.
        env = {"MOCK_OOM_ABOVE": "0.9"}
        proc = self.start("--model-path", "m", "--port", str(free_port()), load="0.4",
                          extra_env=env)
        _, err = proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("torch.OutOfMemoryError: CUDA out of memory.", err)
        port = free_port()
        self.start("--model-path", "m", "--port", str(port), "--mem-fraction-static", "0.9",
                   load="0.4", extra_env=env)
        self.wait_status(f"http://127.0.0.1:{port}/health", 200, 20)

    def test_mode_file_overrides_env(self):
        mode_file = os.path.join(self.tmp, "mode")
        with open(mode_file, "w") as f:
            f.write("crash\n")
        proc = self.start("--model-path", "m", "--port", str(free_port()), mode="normal",
                          extra_env={"MOCK_SGLANG_MODE_FILE": mode_file,
                                     "MOCK_SGLANG_CRASH_AFTER": "0.5"})
        proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, -signal.SIGSEGV)

    def test_crash_exit_code(self):
        proc = self.start("--model-path", "m", "--port", str(free_port()), mode="crash",
                          extra_env={"MOCK_SGLANG_CRASH_AFTER": "0.5", "MOCK_SGLANG_CRASH_EXIT": "3"})
        proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 3)

    def test_hang_stops_answering_but_stays_alive(self):
        port = free_port()
        proc = self.start("--model-path", "m", "--port", str(port), mode="hang", load="0.5",
                          extra_env={"MOCK_SGLANG_HANG_AFTER": "1"})
        self.wait_status(f"http://127.0.0.1:{port}/health", 200, 15)
        time.sleep(1.5)
        self.assertEqual(http_get(f"http://127.0.0.1:{port}/health", timeout=1.0)[0], None)
        self.assertIsNone(proc.poll())
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
        self.assertEqual(proc.returncode, 0)

    def test_never_ready(self):
        port = free_port()
        proc = self.start("--model-path", "m", "--port", str(port), mode="never-ready", load="0.3")
        self.wait_status(f"http://127.0.0.1:{port}/health", 503, 15)
        time.sleep(1.0)
        self.assertEqual(http_get(f"http://127.0.0.1:{port}/health")[0], 503)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
        self.assertEqual(proc.returncode, 0)

    def test_leak_grows_rss(self):
        proc = self.start("--model-path", "m", "--port", str(free_port()), mode="leak", load="0.2",
                          extra_env={"MOCK_SGLANG_LEAK_MIB": "20", "MOCK_SGLANG_LEAK_INTERVAL": "0.05"})
        deadline = time.monotonic() + 15
        rss_kib = 0
        while time.monotonic() < deadline and rss_kib < 150 * 1024:
            with open(f"/proc/{proc.pid}/status") as f:
                rss_kib = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
            time.sleep(0.1)
        self.assertGreaterEqual(rss_kib, 150 * 1024)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
        self.assertEqual(proc.returncode, 0)

    def test_hostile_plants_floods_then_crashes(self):
        work = tempfile.mkdtemp(dir=self.tmp)
        victim = os.path.join(work, "victim")
        with open(victim, "w") as out:
            out.write("root's")
        plan = [
            {"path": os.path.join(work, "state", "events.jsonl"), "kind": "symlink", "target": victim},
            {"path": os.path.join(work, "state", "supervisor.json"), "kind": "fifo"},
            {"path": os.path.join(work, "cache", "stamp"), "kind": "hardlink", "target": victim},
            {"path": os.path.join(work, "cache", "garbage.json"), "kind": "garbage"},
            {"path": "/proc/version", "kind": "symlink", "target": victim},
        ]
        plan_file = os.path.join(work, "plan.json")
        with open(plan_file, "w") as out:
            json.dump(plan, out)
        report_file = os.path.join(work, "report.json")
        proc = self.start("--model-path", "m", "--port", str(free_port()), mode="hostile", load="0.2",
                          extra_env={"MOCK_SGLANG_HOSTILE_PLAN": plan_file,
                                     "MOCK_SGLANG_HOSTILE_REPORT": report_file,
                                     "MOCK_SGLANG_FLOOD_BYTES": str(1 << 21)})
        out, _ = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, -signal.SIGSEGV)
        lines = out.split("\n")
        self.assertIn("A" * (1 << 21), lines)  # one line of 2 MiB, no newline inside
        self.assertEqual(lines[-2], "mock-sglang: flood done, crashing")
        with open(report_file) as source:
            report = json.load(source)
        self.assertEqual(report[plan[0]["path"]], "planted")
        self.assertEqual(os.readlink(plan[0]["path"]), victim)
        self.assertTrue(stat_is_fifo(plan[1]["path"]))
        self.assertEqual(os.stat(plan[2]["path"]).st_ino, os.stat(victim).st_ino)
        self.assertTrue(report["/proc/version"].startswith("refused: "))
        with open(victim) as source:
            self.assertEqual(source.read(), "root's")


def stat_is_fifo(path):
    import stat
    return stat.S_ISFIFO(os.lstat(path).st_mode)


if __name__ == "__main__":
    unittest.main()
