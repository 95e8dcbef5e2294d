#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpulaunch_verify
short_description: Compare a node with a gpulaunch lockfile
description:
  - Runs C(gpulaunch verify LOCK --json) on the node, which compares the merged profile, the node's
    driver, toolkit, GPUs, Python stack, engine, the model's files and the rendered unit with what
    the lockfile recorded.
  - With I(fail_on_drift=true) (the default), a node that drifted fails the task, with the drift
    table (field, locked, node, why it matters) in the message. With I(fail_on_drift=false) the
    drift is only reported.
  - Reads only; never changes the node, so it is never C(changed).
version_added: "0.1.0"
author: gpulaunch developers
extends_documentation_fragment:
  - gpulaunch.fleet.gpulaunch
options:
  lock:
    description: The lockfile on the node, as C(gpulaunch lock) wrote it.
    type: path
    required: true
  profile:
    description: The profile to compare, by name or path. Defaults to the lock's profile file when
      it exists on the node, else the profile of the lock's name.
    type: str
  fail_on_drift:
    description: Fail the task when the node drifted from the lock.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Reads only; runs in check mode too.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to show.
notes:
  - A lock that cannot be read, or a profile that does not load, fails the task whatever
    I(fail_on_drift) says (C(gpulaunch verify) exit status 2).
"""

EXAMPLES = r"""
- name: Refuse a node that drifted from the lock
  gpulaunch.fleet.gpulaunch_verify:
    lock: /etc/gpulaunch/locks/k26-ar.lock

- name: Only report the drift
  gpulaunch.fleet.gpulaunch_verify:
    lock: /etc/gpulaunch/locks/k26-ar.lock
    fail_on_drift: false
  register: verified

- name: Show it
  ansible.builtin.debug:
    var: verified.drift
  when: not verified.ok
"""

RETURN = r"""
ok:
  description: Whether the node matches the lock.
  returned: always
  type: bool
  sample: false
profile:
  description: The profile compared.
  returned: always
  type: str
  sample: k26-ar
lock:
  description: The lockfile compared against.
  returned: always
  type: str
  sample: /etc/gpulaunch/locks/k26-ar.lock
drift:
  description: The fields that differ, as C(gpulaunch verify --json) lists them.
  returned: always
  type: list
  elements: dict
  contains:
    field:
      description: The recorded field.
      type: str
      sample: node.toolkit.version
    locked:
      description: Its value in the lock (C((none)) when absent).
      type: str
      sample: "13.0"
    node:
      description: Its value on the node now (C((none)) when absent).
      type: str
      sample: "12.9"
    why:
      description: Why a change in this field matters to a running engine.
      type: str
notes:
  description: What the node's own lock could not pin (a file it could not read, ...).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpulaunch.fleet.plugins.module_utils.gpulaunch_cli import (
    GPULAUNCH_ARGUMENT_SPEC,
    VERIFY_DRIFT,
    VERIFY_OK,
    drift_table,
    fail_with_output,
    parse_json,
    run_gpulaunch,
)


def main():
    argument_spec = dict(
        lock=dict(type="path", required=True),
        profile=dict(type="str"),
        fail_on_drift=dict(type="bool", default=True),
    )
    argument_spec.update(GPULAUNCH_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    args = ["verify", module.params["lock"], "--json"]
    if module.params["profile"]:
        args += ["--profile", module.params["profile"]]
    rc, out, err = run_gpulaunch(module, args)
    if rc not in (VERIFY_OK, VERIFY_DRIFT):
        fail_with_output(module, args, rc, out, err)
    answer = parse_json(module, args, out, err)
    result = dict(changed=False, ok=answer["ok"], profile=answer["profile"], lock=answer["lock"],
                  drift=answer["drift"], notes=answer.get("notes", []))
    if not answer["ok"] and module.params["fail_on_drift"]:
        module.fail_json(msg="%s drifted from %s in %d field(s):\n%s" % (
            answer["profile"], answer["lock"], len(answer["drift"]), drift_table(answer["drift"])),
            **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
