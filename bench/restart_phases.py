#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/restart_bench.sh's report: engine death -> serving again under gpulaunch and under
supervisord, and gpulaunch's time split by phase from the unit's journal.

    restart_phases.py [--smoke] --crashes N --delay SECONDS GL_DIR SV_DIR

Each directory holds the engine's stamps (bench/supervise_engine.sh): `starts` and `deaths` (ns
since the epoch, one a line) and ready.N (epoch seconds the Nth start's /health turned 200);
GL_DIR also `journal.json`, `journalctl -u UNIT -o json` of the gpulaunch unit. Death i is
followed by start i+1, which serves at ready.(i+1).
"""
import argparse
import json
import os
import re
import statistics
import sys

# The journal lines each phase ends at: systemd 252's own (src/core/service.c, unit.c) and
# `run`'s and record-exit's (catalog/journal_messages, supervise/exit_status).
MARKS = [
    ("run_exit", re.compile(r": Main process exited, ")),
    ("classified", re.compile(r"^gpulaunch: stop classified as ")),
    ("stopped", re.compile(r": (Failed with result|Deactivated successfully)")),
    ("scheduled", re.compile(r": Scheduled restart job")),
    ("starting", re.compile(r"^Starting ")),
    ("caches", re.compile(r"^gpulaunch: JIT caches ")),
    ("gate", re.compile(r"^gpulaunch: backing off ")),
    ("spawned", re.compile(r"^gpulaunch: started engine, pid ")),
    ("ready_seen", re.compile(r"^gpulaunch: engine is serving: ")),
]

# The phases reported, each from the mark before it (death first) to its own.
PHASES = [
    ("stop recorded", "death", "stopped",
     "run sees the end and exits, record-exit classifies and writes the history (ExecStopPost=)"),
    ("restart job", "stopped", "scheduled", "systemd's RestartSec= (100 ms) and its timer's slack"),
    ("start gate", "scheduled", "gate",
     "ExecStartPre= prepare-caches, the sandbox, `run` up to its gate's decision"),
    ("delay", "gate", "spawned", "what the delay has left (it counts from the death), then spawn"),
    ("engine start", "spawned", "serving", "the engine's own start (its /health 200)"),
    ("ready seen", "serving", "ready_seen", "`run` sees the 200: READY=1"),
]


def read_stamps(directory):
    def lines(name):
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            return []
        with open(path) as source:
            return [int(line) / 1e9 for line in source if line.strip()]

    ready = {}
    for name in os.listdir(directory):
        if name.startswith("ready.") and name[6:].isdigit():
            with open(os.path.join(directory, name)) as source:
                text = source.read().strip()
            if text:
                ready[int(name[6:])] = float(text)
    return lines("starts"), lines("deaths"), ready


def read_journal(path):
    entries = []
    with open(path) as source:
        for line in source:
            entry = json.loads(line)
            message = entry.get("MESSAGE", "")
            if isinstance(message, list):
                message = bytes(message).decode(errors="replace")
            entries.append((int(entry["__REALTIME_TIMESTAMP"]) / 1e6, message or ""))
    entries.sort()
    return entries


def cycles(starts, deaths, ready, crashes):
    """(death, next start, next start's serving) for each death that was served again."""
    out = []
    for i, death in enumerate(deaths[:crashes]):
        if i + 1 < len(starts) and i + 2 in ready:
            out.append((death, starts[i + 1], ready[i + 2]))
    return out


def gl_marks(entries, death, serving):
    """Each mark's first time after the death (ready_seen: after the serving)."""
    found = {"death": death, "serving": serving}
    for name, pattern in MARKS:
        since = serving if name == "ready_seen" else death
        for when, message in entries:
            if when >= since and pattern.search(message):
                found[name] = when
                break
    return found


def ms(seconds):
    return round(seconds * 1000)


def median(values):
    return round(statistics.median(values)) if values else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--crashes", type=int, required=True)
    parser.add_argument("--delay", type=float, required=True)
    parser.add_argument("gl")
    parser.add_argument("sv")
    args = parser.parse_args()

    gl_starts, gl_deaths, gl_ready = read_stamps(args.gl)
    sv_starts, sv_deaths, sv_ready = read_stamps(args.sv)
    gl = cycles(gl_starts, gl_deaths, gl_ready, args.crashes)
    sv = cycles(sv_starts, sv_deaths, sv_ready, args.crashes)
    entries = read_journal(os.path.join(args.gl, "journal.json"))
    marks = [gl_marks(entries, death, serving) for death, _, serving in gl]

    if args.smoke:
        # Each supervisor brought the engine back to serving, and every phase was found.
        problems = []
        if not gl:
            problems.append("gpulaunch: the engine did not serve again")
        if not sv:
            problems.append("supervisord: the engine did not serve again")
        for found in marks:
            missing = [p for p, a, b, _ in PHASES if a not in found or b not in found]
            if missing:
                problems.append("gpulaunch: no journal mark for " + ", ".join(missing))
        if problems:
            for problem in problems:
                print("restart_bench: " + problem, file=sys.stderr)
            return 1
        print("restart_bench: smoke ok")
        return 0

    def row(name, values, note=""):
        text = ",".join(str(v) for v in values)
        print(f"  {name:<34} {median(values) if values else '-':>6} ms   ({text}){note}")

    print(f"death -> serving again, {len(gl)} crash(es) under gpulaunch, {len(sv)} under "
          f"supervisord; restart.delay {args.delay:g}s")
    for name, runs, extra in (("gpulaunch", gl, args.delay), ("supervisord", sv, 0.0)):
        print(name)
        row("death -> serving", [ms(r - d) for d, _, r in runs])
        row("death -> engine started", [ms(s - d) for d, s, _ in runs])
        row("engine's own start (start -> 200)", [ms(r - s) for _, s, r in runs])
        # (death -> serving) - (own start) - delay = (death -> engine started) - delay
        row("over own start + delay", [ms((s - d) - extra) for d, s, _ in runs])
    print("gpulaunch by phase (journal timestamps)")
    for name, start, end, what in PHASES:
        values = [ms(m[end] - m[start]) for m in marks if start in m and end in m]
        row(name, values, f"  {what}")
    detail = [("  run exits", "death", "run_exit"), ("  record-exit decides", "run_exit", "classified"),
              ("  record-exit records, exits", "classified", "stopped")]
    detail += [("  systemd's start job", "scheduled", "starting"),
               ("  prepare-caches (ExecStartPre=)", "starting", "caches"),
               ("  sandbox, `run` to its gate", "caches", "gate")]
    print("stop recorded and start gate, split")
    for name, start, end in detail:
        row(name, [ms(m[end] - m[start]) for m in marks if start in m and end in m])
    return 0


if __name__ == "__main__":
    sys.exit(main())
