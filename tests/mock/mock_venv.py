# SPDX-License-Identifier: Apache-2.0
"""What the mock engines' tests share: a venv with both mocks (mock/install.sh, offline), free
loopback ports, HTTP without exceptions, and the engines each test started, killed after it."""

import os
import shutil
import socket
import subprocess
import tempfile
import unittest
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=1.0, data=None):
    """(HTTP status, body), or (None, b"") when nothing answers (refused or timed out)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout, data=data) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError):
        return None, b""


class MockVenvTestCase(unittest.TestCase):
    """One venv per test class; self.procs are the engines a test started."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mock-engine-test.")
        cls.venv = os.path.join(cls.tmp, "venv")
        subprocess.run(["bash", os.path.join(ROOT, "mock", "install.sh"), cls.venv], check=True,
                       stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.procs = []

    def tearDown(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream:
                    stream.close()
