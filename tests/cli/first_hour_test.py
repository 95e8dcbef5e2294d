# SPDX-License-Identifier: Apache-2.0
"""An operator's first hour, typed at a terminal (issue 46 item 9).

    first_hour_test.py GPULAUNCH SOURCE_DIR FAKE_NVML_DIR

Drives the real gpulaunch binary through a pseudo-terminal (os.openpty: stdin, stdout and stderr
are the pty, as in an operator's shell), one pty per command, against a private systemd 252 booted
by tests/integration/harness/systemd-harness.sh in the test's own namespaces, with the mock SGLang
(mock/install.sh) and the fake NVML (tests/fakes/nvml) behind a profile laid out as
profiles/demo.toml. The session, in order:

  1. up demo --runtime          progress redrawn on the terminal, then the ready line
  2. status; status demo; check demo
  3. stauts (a typo: did-you-mean, exit 2); down dmeo --runtime (did-you-mean, exit 2, the demo
     still active afterwards)
  4. restart demo with the engine made to fail its next start (the mock's MOCK_SGLANG_MODE_FILE
     says cuda-oom): the failure report, the engine's own lines, exit 1
  5. down demo --runtime --purge: what it removed and what it left

Each command's screen is compared with tests/cli/first_hour/NN-NAME.screen after normalisation:

  * the terminal's own rendering: the pty's CRLF becomes LF, and on each line only what follows the
    last carriage return stays (what `\\r\\033[K` redraws leave on the screen);
  * ANSI escape sequences removed (colour is asserted separately: present on the terminal for
    up's ready line, status, status NAME and check, absent from the last three through a pipe);
  * placeholders: the scratch directory <SCRATCH>, the binary <GPULAUNCH>, the engine's port
    <PORT>, PIDs <PID>, uids <UID>, dates and clock times <TIME>, durations (1.2s, 3 s, 2m3s,
    45ms, 1h) <DUR>, sizes (KiB..GiB, MB, GB) <SIZE>, 32-hex ids <ID>; the progress line's text
    after "waiting for ready: " <PROGRESS> (the last frame drawn depends on timing; that frames
    were redrawn in place is asserted on the raw bytes), the /health probe's answer counts
    <ANSWERS>;
  * a run of journal lines ("<TIME> unit[<PID>]: ...", status NAME's tail) becomes one line
    "<journal lines>" (the engine's and the probes' lines interleave as they happened);
  * in the overview table only (TABLES), column padding collapsed to two spaces, since column
    widths follow the values the placeholders replaced.

UPDATE_SCREENS=1 rewrites the .screen files from this run (then review `git diff`). Every wait is
on a process's exit, bounded; nothing sleeps to synchronise. Exit 77 (CTest's skip) with the reason
printed only where the private systemd cannot boot here (not root, no unshare).
"""

import difflib
import errno
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

GPULAUNCH, SOURCE, FAKE_NVML = (os.path.abspath(p) for p in sys.argv[1:4])
HARNESS = os.path.join(SOURCE, "tests/integration/harness/systemd-harness.sh")
SCREENS = os.path.join(SOURCE, "tests/cli/first_hour")
UPDATE = os.environ.get("UPDATE_SCREENS") == "1"
PORT = 31471  # tests/README.md, "Ports"
COMMAND_LIMIT_S = 150  # a bound on any one command; the demo's ready_timeout is 2 min

failures = []


def skip(reason):
    print(f"SKIP: first_hour: {reason}")
    sys.exit(77)


def fail(what):
    print(f"FAIL {what}")
    failures.append(what)


def ok(what):
    print(f"ok   {what}")


def expect(condition, what):
    (ok if condition else fail)(what)


# The environment of an operator's root shell: no NO_COLOR, a terminal type, nothing inherited.
OPERATOR_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "TERM": "xterm",
                "LANG": "C.UTF-8"}


def inside(state, argv):
    return [HARNESS, "exec", state, "--", *argv]


def on_pty(argv):
    """Runs argv with a pty as its terminal; returns (exit status, bytes it wrote)."""
    master, slave = os.openpty()
    # 80x24, as a fresh terminal window.
    subprocess.run(["stty", "cols", "80", "rows", "24"], stdin=slave, check=False)
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=OPERATOR_ENV,
                            start_new_session=True)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + COMMAND_LIMIT_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            out += b"\n[first_hour: killed after %d s]\n" % COMMAND_LIMIT_S
            break
        ready, _, _ = select.select([master], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError as error:  # EIO: every writer of the pty has closed it
            if error.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=COMMAND_LIMIT_S), bytes(out)


def through_pipe(argv):
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=OPERATOR_ENV,
                          timeout=COMMAND_LIMIT_S, check=False)
    return proc.returncode, proc.stdout + proc.stderr


TABLES = {"02-status"}  # screens whose columns are padded to their values' widths
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SGR = re.compile(rb"\x1b\[[0-9;]*m")


def screen_of(raw, scratch, table):
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
    lines = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]
    text = ANSI.sub("", "\n".join(lines))
    rules = [
        (re.escape(GPULAUNCH), "<GPULAUNCH>"),
        (re.escape(scratch), "<SCRATCH>"),
        (rf"\b{PORT}\b", "<PORT>"),
        (r"\b[0-9a-f]{32}\b", "<ID>"),
        (r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?( ?[A-Z]{3,4}|[+-]\d\d:?\d\d|Z)?", "<TIME>"),
        (r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d( [A-Z]{3,4})?", "<TIME>"),
        (r"\b[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d\b", "<TIME>"),
        (r"\b\d\d:\d\d:\d\d(\.\d+)?\b", "<TIME>"),
        (r"(?i)\b(pid:?)( +)\d+", r"\1\2<PID>"),
        (r"\(uid \d+\)", "(uid <UID>)"),
        (r"\d+ answers? (200|503)(, \d+ answers? (200|503))*", "<ANSWERS>"),
        (r"waiting for ready: .*", "waiting for ready: <PROGRESS>"),
        (r"\[\d+\]", "[<PID>]"),
        (r"\b\d+(\.\d+)? ?(MiB|GiB|KiB|MB|GB|B)\b", "<SIZE>"),
        (r"\b(\d+h ?)?(\d+m(in)? ?)?\d+(\.\d+)? ?(ms|s|min|m|h)\b", "<DUR>"),
    ]
    for pattern, placeholder in rules:
        text = re.sub(pattern, placeholder, text)
    out = []
    for line in text.split("\n"):
        # A table's column padding follows the widths of values the placeholders replaced.
        if table:
            line = re.sub(r"(?<=\S) {2,}", "  ", line)
        # A journal excerpt (status NAME's tail) holds what the engine and the probes logged, in
        # the order they happened: one marker for the run of lines.
        if re.match(r"<TIME> \S+\[<PID>\]: ", line):
            if out and out[-1] == "<journal lines>":
                continue
            line = "<journal lines>"
        out.append(line)
    return "\n".join(out).rstrip("\n") + "\n"


def compare(name, raw, scratch):
    got = screen_of(raw, scratch, table=name in TABLES)
    path = os.path.join(SCREENS, name + ".screen")
    if UPDATE:
        with open(path, "w", encoding="utf-8") as f:
            f.write(got)
        ok(f"{name}: screen written to {path}")
        return
    try:
        with open(path, encoding="utf-8") as f:
            want = f.read()
    except FileNotFoundError:
        want = ""
    if got == want:
        ok(f"{name}: the screen matches {os.path.relpath(path, SOURCE)}")
        return
    diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                        f"expected {name}.screen", "this run"))
    print(diff)
    print(f"---- raw output of {name} ----\n{raw.decode('utf-8', 'replace')}\n----")
    fail(f"{name}: the screen differs from {os.path.relpath(path, SOURCE)} (diff above; "
         "UPDATE_SCREENS=1 rewrites it)")


def main():
    if os.geteuid() != 0:
        skip("needs root (it boots a private systemd in new PID and mount namespaces)")
    if subprocess.run(["unshare", "--pid", "--mount", "--fork", "--mount-proc", "true"],
                      capture_output=True, check=False).returncode != 0:
        skip("unshare --pid --mount is not permitted here")

    scratch = tempfile.mkdtemp(prefix="gpulaunch-first-hour.")
    os.chmod(scratch, 0o755)
    state = os.path.join(scratch, "systemd")
    try:
        session(scratch, state)
    finally:
        subprocess.run([HARNESS, "poweroff", state], check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    if failures:
        print(f"FAILED: {len(failures)} check(s)")
        return 1
    print("PASS")
    return 0


def prepare(scratch):
    """The demo's node: its venv, model directory and profile, one GPU behind the fake NVML and a
    toolkit root as the rules read it (nvcc never runs)."""
    subprocess.run(["bash", os.path.join(SOURCE, "mock/install.sh"), f"{scratch}/venv"],
                   stdout=subprocess.DEVNULL, check=True)
    cuda = f"{scratch}/cuda"
    for sub in ("bin", "lib64", "include", "../model", "../nvml", "../profiles"):
        os.makedirs(os.path.normpath(f"{cuda}/{sub}"), exist_ok=True)
    files = {
        f"{cuda}/version.json": '{"cuda": {"version": "13.0.2"}, "cuda_nvcc": {"version": "13.0.88"}}\n',
        f"{cuda}/bin/nvcc": "#!/bin/sh\nexit 1\n",
        f"{cuda}/lib64/libcudart.so.13": "",
        f"{cuda}/include/cuda_runtime.h": "",
        f"{cuda}/include/cuda.h": "#define CUDA_VERSION 13000\n",
        f"{scratch}/nvml/node.txt":
            "driver 580.95.05\ncuda 13000\ngpu 12 0 97887 GPU-first-hour-0 NVIDIA RTX PRO 6000\n",
        f"{scratch}/model/config.json":
            '{"architectures": ["LlamaForCausalLM"], "model_type": "llama"}\n',
        f"{scratch}/mode": "normal\n",
        # profiles/demo.toml, with this scratch directory's venv, model and toolkit, a port of the
        # test's own, and the environment the mock and the fake NVML read.
        f"{scratch}/profiles/demo.toml": f'''# The demo: a mock SGLang that loads a fake model in seconds.
description = "gpulaunch demo (mock SGLang)"

[engine]
kind = "sglang"
venv = "{scratch}/venv"

[model]
path = "{scratch}/model"
served_name = "demo"

[parallelism]
tp = 1

[toolkit]
cuda_home = "{cuda}"

[server]
port = {PORT}
ready_timeout = "2min"
watchdog = "30s"

[restart]
delay = "2s"

[env]
MOCK_SGLANG_LOAD_SECONDS = "2"
MOCK_SGLANG_MODE_FILE = "{scratch}/mode"
GPULAUNCH_FAKE_NVML = "{scratch}/nvml/node.txt"
''',
    }
    for path, text in files.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    os.chmod(f"{cuda}/bin/nvcc", 0o755)
    # The unit pins LD_LIBRARY_PATH to the toolkit's lib64: the fake NVML lies there, and the
    # operator's shell reads the same GPU through it.
    shutil.copy(os.path.join(FAKE_NVML, "libnvidia-ml.so.1"), f"{cuda}/lib64/")
    OPERATOR_ENV["LD_LIBRARY_PATH"] = f"{cuda}/lib64"
    OPERATOR_ENV["GPULAUNCH_FAKE_NVML"] = f"{scratch}/nvml/node.txt"
    # ... and uses the toolkit the unit pins (no jit-toolkit-shell-mismatch warning).
    OPERATOR_ENV["CUDA_HOME"] = cuda


def session(scratch, state):
    prepare(scratch)
    boot_env = dict(os.environ, GPULAUNCH_HARNESS_SHARE=f"{scratch}:{os.path.dirname(GPULAUNCH)}")
    booted = subprocess.run([HARNESS, "boot", state], env=boot_env, capture_output=True,
                            text=True, check=False)
    if booted.returncode == 77:
        skip(booted.stderr.strip().splitlines()[-1] if booted.stderr.strip() else "harness skip")
    if booted.returncode != 0:
        fail(f"the private systemd booted (exit {booted.returncode}): {booted.stderr}")
        return
    g = [GPULAUNCH, "-P", f"{scratch}/profiles"]

    def typed(name, args, want_status):
        status, raw = on_pty(inside(state, [*g, *args]))
        expect(status == want_status,
               f"{name}: `gpulaunch {' '.join(args)}` exits {want_status} (got {status})")
        compare(name, raw, scratch)
        return raw

    # 1. The demo, up: progress redrawn in place on the terminal, then the ready line.
    raw = typed("01-up", ["up", "demo", "--runtime"], 0)
    expect(SGR.search(raw) is not None, "01-up: the ready line is coloured on the terminal")
    expect(b"\r\x1b[K" in raw, "01-up: the progress line redraws itself on the terminal")
    expect(b"ready" in raw, "01-up: says it is ready")

    # 2. The overview, one profile, the node: coloured on the terminal, plain through a pipe.
    for name, args in (("02-status", ["status"]), ("03-status-demo", ["status", "demo"]),
                       ("04-check-demo", ["check", "demo"])):
        raw = typed(name, args, 0)
        if name == "03-status-demo":
            expect(b"Started gpulaunch-demo.service" in raw,
                   f"{name}: the journal's tail ends in systemd's Started line")
        expect(SGR.search(raw) is not None, f"{name}: coloured on the terminal")
        piped_status, piped = through_pipe(inside(state, [*g, *args]))
        expect(piped_status == 0 and b"\x1b" not in piped,
               f"{name}: no escape sequence through a pipe (exit {piped_status})")

    # 3. Typos: an unknown command and an unknown profile, each with its did-you-mean; the demo
    # runs on.
    raw = typed("05-typo-stauts", ["stauts"], 2)
    expect(b"did you mean 'status'" in raw, "05-typo-stauts: suggests status")
    raw = typed("06-typo-down-dmeo", ["down", "dmeo", "--runtime"], 2)
    expect(b"did you mean 'demo'" in raw, "06-typo-down-dmeo: suggests demo")
    _, shown = through_pipe(inside(state, [*g, "status", "demo", "--json"]))
    try:
        still = json.loads(shown)[0].get("state")
    except (ValueError, IndexError, AttributeError):
        still = shown.decode("utf-8", "replace")
    expect(still == "active", f"06-typo-down-dmeo: nothing stopped, the demo is active ({still})")

    # 4. A restart whose start fails: the engine runs out of GPU memory while loading.
    with open(f"{scratch}/mode", "w", encoding="utf-8") as f:
        f.write("cuda-oom\n")
    raw = typed("07-restart-fails", ["restart", "demo"], 1)
    expect(b"torch.OutOfMemoryError" in raw or b"CUDA out of memory" in raw,
           "07-restart-fails: the engine's own error is on the screen")

    # 5. Down with --purge: what it removed and what it left.
    typed("08-down-purge", ["down", "demo", "--runtime", "--purge"], 0)


if __name__ == "__main__":
    sys.exit(main())
