# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
"""Running the gpulaunch CLI from a module: one place for the binary, its arguments and its JSON.

The modules wrap the CLI's own answers (``--json``, exit codes); they never re-implement what the
CLI decides (validation, checks, drift, unit rendering)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

GPULAUNCH_ARGUMENT_SPEC = dict(
    gpulaunch_bin=dict(type="path", default="/usr/bin/gpulaunch"),
)


def run_gpulaunch(module, args, check_rc=False):
    """Runs gpulaunch with ``args``; returns (rc, stdout, stderr)."""
    command = [module.params["gpulaunch_bin"]] + list(args)
    return module.run_command(command, check_rc=check_rc, environ_update={"LC_ALL": "C.UTF-8"})


# `gpulaunch verify` and `gpulaunch check`: 0 the same / no errors, 1 drift / errors, 2 could not run.
VERIFY_OK = 0
VERIFY_DRIFT = 1
CHECK_OK = 0
CHECK_ERRORS = 1
# `gpulaunch up --dry-run`: 1 when `up` would refuse on the check's errors.
DRY_RUN_REFUSES = 1
# How many of the CLI's last lines a failure message carries.
LAST_LINES = 15


def last_lines(text, count=LAST_LINES):
    lines = [line.rstrip() for line in (text or "").splitlines() if line.strip()]
    return lines[-count:]


def fail_with_output(module, args, rc, out, err, **extra):
    """Fails the module with the CLI's own last lines (stderr first: its errors go there)."""
    said = last_lines(err) or last_lines(out)
    msg = "gpulaunch %s exited %d" % (" ".join(args), rc)
    if said:
        msg += ": " + "\n".join(said)
    module.fail_json(msg=msg, rc=rc, stdout=out, stderr=err, **extra)


def parse_json(module, args, out, err):
    """The JSON document a ``--json`` command printed on stdout; fails the module without one."""
    try:
        return json.loads(out)
    except ValueError as error:
        module.fail_json(msg="gpulaunch %s printed no JSON: %s" % (" ".join(args), error),
                         stdout=out, stderr=err)
    return None


def run_gpulaunch_json(module, args):
    """Runs gpulaunch with ``args`` (which ask for --json) and returns the parsed answer; fails
    the module with the CLI's own message when it exits non-zero or prints no JSON."""
    rc, out, err = run_gpulaunch(module, args)
    if rc != 0:
        module.fail_json(msg=first_line(err) or "gpulaunch %s exited %d" % (args[0], rc),
                         rc=rc, stdout=out, stderr=err)
    return parse_json(module, args, out, err)


def first_line(text):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def drift_table(rows):
    """FIELD / LOCKED / NODE / WHY, padded, as ``gpulaunch verify`` prints its table."""
    header = dict(field="FIELD", locked="LOCKED", node="NODE", why="WHY IT MATTERS")
    table = [header] + list(rows)
    widths = dict((key, max(len(str(row.get(key, ""))) for row in table))
                  for key in ("field", "locked", "node"))
    return "\n".join("%s  %s  %s  %s" % (str(row.get("field", "")).ljust(widths["field"]),
                                        str(row.get("locked", "")).ljust(widths["locked"]),
                                        str(row.get("node", "")).ljust(widths["node"]),
                                        row.get("why", "")) for row in table)
