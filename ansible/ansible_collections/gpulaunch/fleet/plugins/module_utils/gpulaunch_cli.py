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


def run_gpulaunch_json(module, args):
    """Runs gpulaunch with ``args`` (which ask for --json) and returns the parsed answer; fails
    the module with the CLI's own message when it exits non-zero or prints no JSON."""
    rc, out, err = run_gpulaunch(module, args)
    if rc != 0:
        module.fail_json(msg=first_line(err) or "gpulaunch %s exited %d" % (args[0], rc),
                         rc=rc, stdout=out, stderr=err)
    try:
        return json.loads(out)
    except ValueError as error:
        module.fail_json(msg="gpulaunch %s printed no JSON: %s" % (args[0], error),
                         stdout=out, stderr=err)
    return None


def first_line(text):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""
