#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns a rendered gpulaunch unit into a oneshot that runs the sandbox probe under the unit's
exact [Service] sandbox: what starts, stops, restarts or configures the engine is dropped, every
hardening line is kept as rendered. Paths the unit opens read-write that this host lacks get '-'
(systemd then skips them), which changes no restriction.

Usage: sandbox_units.py UNIT PROBE LOG [PROBE_ARG...] > conformance.service
       --drop-line LINE before UNIT removes one rendered line (the test's own check that a
       broken need fails); --replace-line LINE NEW puts NEW in its place (the knob's line as
       unit/render writes it)."""
import shlex
import sys

# The engine's lifecycle, not its sandbox.
LIFECYCLE = {
    "Type", "NotifyAccess", "ExecStartPre", "ExecStart", "ExecStartPost", "ExecStopPost",
    "WatchdogSec", "Restart", "RestartSec", "RestartPreventExitStatus", "TimeoutStartSec",
    "TimeoutStopSec", "KillMode", "KillSignal", "SendSIGKILL", "LoadCredential", "Environment",
}
OPTIONAL_PATHS = {"ReadWritePaths", "ReadOnlyPaths", "BindPaths", "BindReadOnlyPaths"}


def main(argv):
    drop, replace = [], {}
    while argv and argv[0] in ("--drop-line", "--replace-line"):
        if argv[0] == "--drop-line":
            drop.append(argv[1])
            argv = argv[2:]
        else:
            replace[argv[1]] = argv[2]
            argv = argv[3:]
    unit, probe, log, probe_args = argv[0], argv[1], argv[2], argv[3:]
    section = None
    service = []
    for line in open(unit, encoding="utf-8").read().splitlines():
        if line.startswith("["):
            section = line
            continue
        if section != "[Service]" or "=" not in line or line.startswith("#"):
            continue
        if line in drop:
            continue
        line = replace.get(line, line)
        key, value = line.split("=", 1)
        if key in LIFECYCLE:
            continue
        if key in OPTIONAL_PATHS:
            words = shlex.split(value.replace("%%", "\x00"))
            value = " ".join('"-' + w.lstrip("-").replace("\x00", "%%") + '"' for w in words)
        service.append(f"{key}={value}")
    devices = [line.split("=", 1)[1].split()[0] for line in service
               if line.startswith("DeviceAllow=/dev/")]
    args = probe_args + [f"--device={d}" for d in devices if d not in ("/dev/infiniband/rdma_cm",)]
    # The unit's own knob (service.allow = ["ptrace"]) decides what the probe expects of ptrace.
    if any(line.startswith("SystemCallFilter=") and "ptrace" in line.split("=", 1)[1].split()
           for line in service):
        args.append("--ptrace=allowed")
    print("[Unit]\nDescription=gpulaunch sandbox conformance: " + unit.rsplit("/", 1)[-1])
    print("\n[Service]\nType=oneshot")
    print("ExecStart=" + " ".join(shlex.quote(w) for w in [probe] + args))
    print(f"StandardOutput=truncate:{log}\nStandardError=inherit")
    print("\n".join(service))


if __name__ == "__main__":
    main(sys.argv[1:])
