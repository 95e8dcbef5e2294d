#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in gpulaunch for the collection's module tests: appends its argv (one JSON list a line)
to $FAKE_GPULAUNCH_DIR/calls, and answers from $FAKE_GPULAUNCH_DIR/answers.json, whose keys are
the first arguments joined by spaces, longest match first ("up --dry-run" before "up"), and whose
values are {"rc": N, "stdout": TEXT, "stderr": TEXT}. An unlisted command exits 0 silently."""
import json
import os
import sys

directory = os.environ["FAKE_GPULAUNCH_DIR"]
args = sys.argv[1:]
with open(os.path.join(directory, "calls"), "a") as calls:
    calls.write(json.dumps(args) + "\n")
with open(os.path.join(directory, "answers.json")) as answers_file:
    answers = json.load(answers_file)
flags = [arg for arg in args if arg.startswith("--")]
for key in sorted(answers, key=len, reverse=True):
    words = key.split()
    if words[0] == args[0] and all(word in flags for word in words[1:]):
        answer = answers[key]
        sys.stdout.write(answer.get("stdout", ""))
        sys.stderr.write(answer.get("stderr", ""))
        sys.exit(answer.get("rc", 0))
sys.exit(0)
