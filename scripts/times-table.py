#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the run's phases (scripts/phase-times.sh) and every ctest test (its JUnit file), each
slowest first: python3 times-table.py TIMES_TSV [CTEST_JUNIT_XML]."""
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path


def main() -> None:
    phases = []
    times = Path(sys.argv[1])
    if times.exists():
        for line in times.read_text().splitlines():
            kind, name, seconds, status = line.split("\t")
            phases.append((float(seconds), name, "ok" if status == "0" else f"exit {status}"))
    tests = []
    if len(sys.argv) > 2 and Path(sys.argv[2]).exists():
        try:
            root = ElementTree.parse(sys.argv[2]).getroot()
        except ElementTree.ParseError as error:
            print(f"times: {sys.argv[2]}: {error}")
            root = None
        for case in root.iter("testcase") if root is not None else []:
            status = case.get("status", "run")
            if case.find("failure") is not None:
                status = "FAILED"
            elif case.find("skipped") is not None or status == "notrun":
                status = "skipped"
            else:
                status = "ok"
            tests.append((float(case.get("time", 0)), case.get("name"), status))
    print("\n== times, slowest first")
    print(f"{'phase':<40} {'seconds':>9}  status")
    for seconds, name, status in sorted(phases, reverse=True):
        print(f"{name:<40} {seconds:>9.1f}  {status}")
    print(f"{'all phases':<40} {sum(p[0] for p in phases):>9.1f}")
    if tests:
        print(f"\n{'test':<40} {'seconds':>9}  status")
        for seconds, name, status in sorted(tests, reverse=True):
            print(f"{name:<40} {seconds:>9.1f}  {status}")
        print(f"{'all tests (' + str(len(tests)) + ')':<40} {sum(t[0] for t in tests):>9.1f}")


if __name__ == "__main__":
    main()
