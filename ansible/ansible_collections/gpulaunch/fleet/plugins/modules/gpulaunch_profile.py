#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpulaunch_profile
short_description: Place a gpulaunch profile, its drop-ins and a lockfile on a node
description:
  - Writes the profile C(NAME.toml), its drop-ins C(NAME.toml.d/*.toml) and optionally a lockfile
    written by C(gpulaunch lock) on the controller.
  - The new files are first validated where they will be read, by C(gpulaunch show) on a root-only
    staging directory beside the profiles directory; a profile gpulaunch refuses is never placed,
    and the task fails with gpulaunch's own C(file:line:column) message.
  - Changed only when a file's content changed. Each file is replaced atomically.
  - Drop-ins are declarative; a C(.toml) drop-in of the profile that I(dropins) does not list is
    removed.
version_added: "0.1.0"
author: gpulaunch developers
extends_documentation_fragment:
  - gpulaunch.fleet.gpulaunch
options:
  name:
    description: The profile's name (the file is C(NAME.toml)).
    type: str
    required: true
  content:
    description: The profile's TOML text, e.g. from C(lookup('file', 'k26-ar.toml')). Required with
      I(state=present).
    type: str
  dropins:
    description: Drop-in file names (ending in C(.toml)) and their TOML text.
    type: dict
    default: {}
  lockfile:
    description:
      - The lockfile's text, as C(gpulaunch lock) wrote it on the controller.
      - Ansible's templating turns a JSON text such as C(lookup('file', 'k26-ar.lock')) into a
        dictionary; the module then writes it back as JSON indented by two spaces, as
        C(gpulaunch lock) does, so both give the same file.
    type: raw
  lockfile_path:
    description: Where the lockfile goes on the node. Defaults to C(/etc/gpulaunch/locks/NAME.lock).
    type: path
  profiles_dir:
    description: The directory of profiles on the node.
    type: path
    default: /etc/gpulaunch/profiles
  state:
    description: C(present) places the files; C(absent) removes the profile, its drop-ins and the
      lockfile at I(lockfile_path).
    type: str
    choices: [present, absent]
    default: present
attributes:
  check_mode:
    support: full
    description: Validates, and reports what would change without writing.
  diff_mode:
    support: full
    description: Shows each changed file before and after.
"""

EXAMPLES = r"""
- name: Place the profile and its lock
  gpulaunch.fleet.gpulaunch_profile:
    name: k26-ar
    content: "{{ lookup('file', 'profiles/k26-ar.toml') }}"
    dropins:
      10-port.toml: |
        [server]
        port = 30001
    lockfile: "{{ lookup('file', 'locks/k26-ar.lock') }}"
"""

RETURN = r"""
files:
  description: The files written or removed, with what happened to each.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/etc/gpulaunch/profiles/k26-ar.toml", "action": "replaced"}]
lockfile_path:
  description: Where the lockfile is on the node.
  returned: when a lockfile is placed or removed
  type: str
"""

import json
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.gpulaunch.fleet.plugins.module_utils.gpulaunch_cli import (
    GPULAUNCH_ARGUMENT_SPEC,
    first_line,
    run_gpulaunch,
)


def read_existing(path):
    if os.path.islink(path):
        return None, "a symbolic link"
    if not os.path.exists(path):
        return None, None
    if not os.path.isfile(path):
        return None, "not a regular file"
    with open(path, "rb") as existing:
        return to_text(existing.read(), errors="surrogate_or_strict"), None


def lock_text(lockfile):
    """The lock as text: a dictionary (templating parsed the JSON) is dumped as gpulaunch does."""
    if isinstance(lockfile, dict):
        return json.dumps(lockfile, indent=2, ensure_ascii=False) + "\n"
    return to_text(lockfile)


def dropin_names_valid(module, dropins):
    for name in dropins:
        if "/" in name or name.startswith(".") or not name.endswith(".toml"):
            module.fail_json(msg="drop-in name '%s' must be a file name ending in .toml" % name)


def stage_and_validate(module, name, content, dropins):
    """Writes the new profile into a root-only directory beside the profiles directory (the
    loader refuses files others can write, and so must the staging place) and asks gpulaunch to
    merge and validate it. Fails the module with gpulaunch's message."""
    parent = os.path.dirname(module.params["profiles_dir"].rstrip("/")) or "/"
    if not os.path.isdir(parent):
        os.makedirs(parent, 0o755)
    staging = tempfile.mkdtemp(prefix=".gpulaunch-profile-", dir=parent)
    try:
        os.chmod(staging, 0o700)
        with open(os.path.join(staging, name + ".toml"), "wb") as staged:
            staged.write(to_bytes(content))
        if dropins:
            os.mkdir(os.path.join(staging, name + ".toml.d"), 0o755)
            for dropin, text in dropins.items():
                with open(os.path.join(staging, name + ".toml.d", dropin), "wb") as staged:
                    staged.write(to_bytes(text))
        rc, out, err = run_gpulaunch(module, ["-P", staging, "show", name])
        if rc != 0:
            # Name the files where they would have gone, not the staging copies.
            shown = first_line(err).replace(staging, module.params["profiles_dir"].rstrip("/"))
            module.fail_json(msg="gpulaunch refused the profile: %s" % shown, rc=rc, stderr=err)
        return out
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class Placement(object):
    def __init__(self, module):
        self.module = module
        self.files = []
        self.diffs = []
        self.changed = False

    def place(self, path, text):
        before, problem = read_existing(path)
        if problem:
            self.module.fail_json(msg="Refusing to replace '%s': %s" % (path, problem))
        if before == text:
            self.files.append(dict(path=path, action="unchanged"))
            return
        self.changed = True
        self.files.append(dict(path=path, action="created" if before is None else "replaced"))
        self.diffs.append(dict(before_header=path, after_header=path, before=before or "",
                               after=text))
        if self.module.check_mode:
            return
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        descriptor, temporary = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        with os.fdopen(descriptor, "wb") as written:
            written.write(to_bytes(text))
            written.flush()
            os.fsync(written.fileno())
        os.chmod(temporary, 0o644)
        self.module.atomic_move(temporary, path)

    def remove(self, path):
        if os.path.islink(path) or os.path.isfile(path):
            before, _ = read_existing(path)
            self.changed = True
            self.files.append(dict(path=path, action="removed"))
            self.diffs.append(dict(before_header=path, after_header=path, before=before or "",
                                   after=""))
            if not self.module.check_mode:
                os.unlink(path)


def main():
    argument_spec = dict(
        name=dict(type="str", required=True),
        content=dict(type="str"),
        dropins=dict(type="dict", default={}),
        lockfile=dict(type="raw"),
        lockfile_path=dict(type="path"),
        profiles_dir=dict(type="path", default="/etc/gpulaunch/profiles"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )
    argument_spec.update(GPULAUNCH_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           required_if=[("state", "present", ["content"])])
    name = module.params["name"]
    if "/" in name or name.startswith("."):
        module.fail_json(msg="profile name '%s' must be a plain name" % name)
    dropins = dict((key, to_text(value)) for key, value in module.params["dropins"].items())
    dropin_names_valid(module, dropins)
    profiles_dir = module.params["profiles_dir"]
    profile_path = os.path.join(profiles_dir, name + ".toml")
    dropin_dir = os.path.join(profiles_dir, name + ".toml.d")
    lockfile_path = module.params["lockfile_path"] or os.path.join("/etc/gpulaunch/locks",
                                                                   name + ".lock")
    placement = Placement(module)
    result = dict(lockfile_path=lockfile_path)

    if module.params["state"] == "absent":
        placement.remove(profile_path)
        if os.path.isdir(dropin_dir) and not os.path.islink(dropin_dir):
            for dropin in sorted(os.listdir(dropin_dir)):
                placement.remove(os.path.join(dropin_dir, dropin))
            if not module.check_mode:
                os.rmdir(dropin_dir)
        placement.remove(lockfile_path)
    else:
        stage_and_validate(module, name, module.params["content"], dropins)
        placement.place(profile_path, module.params["content"])
        for dropin in sorted(dropins):
            placement.place(os.path.join(dropin_dir, dropin), dropins[dropin])
        if os.path.isdir(dropin_dir) and not os.path.islink(dropin_dir):
            for present in sorted(os.listdir(dropin_dir)):
                if present.endswith(".toml") and present not in dropins:
                    placement.remove(os.path.join(dropin_dir, present))
        if module.params["lockfile"] is not None:
            placement.place(lockfile_path, lock_text(module.params["lockfile"]))

    result.update(changed=placement.changed, files=placement.files)
    if module._diff:
        result["diff"] = placement.diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
