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

import errno
import json
import os
import re
import shutil
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.gpulaunch.fleet.plugins.module_utils.gpulaunch_cli import (
    GPULAUNCH_ARGUMENT_SPEC,
    first_line,
    run_gpulaunch,
)


# src/profile/profile_name.cpp's rule (is_valid_profile_name, kRule), which gpulaunch applies to
# every name it builds a path from; tests/ansible checks the two say the same.
PROFILE_NAME_RULE = (
    "letters, digits, '-', '_', '.', not starting with '.' or '-', at most 64 characters")
PROFILE_NAME = re.compile(r"\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\Z")

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class LinkOnTheWay(Exception):
    pass


def open_directory(path, create=False):
    """A descriptor of the directory `path`, every component from / opened without following a
    link (LinkOnTheWay names the first that is a link or not a directory); None when missing and
    not `create`. Missing directories are made root's, 0755."""
    fd = os.open("/", DIRECTORY_FLAGS)
    walked = ""
    try:
        for part in [p for p in os.path.abspath(path).split("/") if p]:
            walked += "/" + part
            try:
                step = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    return None
                os.mkdir(part, 0o755, dir_fd=fd)
                step = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
                os.fchmod(step, 0o755)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise LinkOnTheWay(walked)
                raise
            os.close(fd)
            fd = step
        result, fd = fd, None
        return result
    finally:
        if fd is not None:
            os.close(fd)


def read_existing(directory_fd, leaf):
    """The text of `leaf` in the directory, never through a link; (None, why) when it is not a
    regular file, (None, None) when missing."""
    if directory_fd is None:
        return None, None
    try:
        info = os.stat(leaf, dir_fd=directory_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None, None
    if stat.S_ISLNK(info.st_mode):
        return None, "a symbolic link"
    if not stat.S_ISREG(info.st_mode):
        return None, "not a regular file"
    fd = os.open(leaf, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory_fd)
    with os.fdopen(fd, "rb") as existing:
        return to_text(existing.read(), errors="surrogate_or_strict"), None


def lock_text(lockfile):
    """The lock as text: a dictionary (templating parsed the JSON) is dumped as gpulaunch does."""
    if isinstance(lockfile, dict):
        return json.dumps(lockfile, indent=2, ensure_ascii=False) + "\n"
    return to_text(lockfile)


def profile_name_valid(module, name):
    if not PROFILE_NAME.match(name):
        module.fail_json(msg="'%s' is not a valid profile name (%s)" % (name, PROFILE_NAME_RULE))


def dropin_names_valid(module, dropins):
    for name in dropins:
        if not name.endswith(".toml") or not PROFILE_NAME.match(name[:-len(".toml")]):
            module.fail_json(msg="drop-in name '%s' must be NAME.toml, NAME %s" % (
                name, PROFILE_NAME_RULE))


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
        rc, out, err = run_gpulaunch(module, ["-P", staging, "show", "--", name])
        if rc != 0:
            # Name the files where they would have gone, not the staging copies.
            shown = first_line(err).replace(staging, module.params["profiles_dir"].rstrip("/"))
            module.fail_json(msg="gpulaunch refused the profile: %s" % shown, rc=rc, stderr=err)
        return out
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class Placement(object):
    """Writes and removes files through descriptors of their directories, opened with no link
    followed anywhere on the way: a NAME.toml.d that is a link, or a link in the path, is
    refused, never written through. A placed file is root's, 0644, whoever owned the one it
    replaces."""

    def __init__(self, module):
        self.module = module
        self.files = []
        self.diffs = []
        self.changed = False

    def directory(self, path, written, create=False):
        """`path` opened as open_directory does; `written` names the file in the message."""
        try:
            return open_directory(path, create)
        except LinkOnTheWay as link:
            self.module.fail_json(msg="Refusing to write '%s': '%s' is a symbolic link or not a "
                                  "directory" % (written, str(link)))
        return None

    def place(self, path, text):
        directory, leaf = os.path.split(path)
        fd = self.directory(directory, path)
        try:
            before, problem = read_existing(fd, leaf)
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
            if fd is None:
                fd = self.directory(directory, path, create=True)
            temporary = ".tmp-%s-%s" % (leaf, os.urandom(6).hex())
            out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                          dir_fd=fd)
            with os.fdopen(out, "wb") as written:
                written.write(to_bytes(text))
                if os.geteuid() == 0:
                    os.fchown(written.fileno(), 0, 0)
                os.fchmod(written.fileno(), 0o644)
                written.flush()
                os.fsync(written.fileno())
            os.rename(temporary, leaf, src_dir_fd=fd, dst_dir_fd=fd)
            os.fsync(fd)
        finally:
            if fd is not None:
                os.close(fd)

    def remove(self, path):
        directory, leaf = os.path.split(path)
        fd = self.directory(directory, path)
        if fd is None:
            return
        try:
            try:
                info = os.stat(leaf, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return
            if not (stat.S_ISLNK(info.st_mode) or stat.S_ISREG(info.st_mode)):
                return
            before, _ = read_existing(fd, leaf)
            self.changed = True
            self.files.append(dict(path=path, action="removed"))
            self.diffs.append(dict(before_header=path, after_header=path, before=before or "",
                                   after=""))
            if not self.module.check_mode:
                os.unlink(leaf, dir_fd=fd)
        finally:
            os.close(fd)

    def dropins_present(self, dropin_dir):
        """The names in NAME.toml.d; none when it is missing. A link there is refused."""
        fd = self.directory(dropin_dir, dropin_dir)
        if fd is None:
            return None
        try:
            return sorted(os.listdir(fd))
        finally:
            os.close(fd)


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
    profile_name_valid(module, name)
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
        present = placement.dropins_present(dropin_dir)
        if present is not None:
            for dropin in present:
                placement.remove(os.path.join(dropin_dir, dropin))
            if not module.check_mode:
                os.rmdir(dropin_dir)
        placement.remove(lockfile_path)
    else:
        stage_and_validate(module, name, module.params["content"], dropins)
        placement.place(profile_path, module.params["content"])
        for dropin in sorted(dropins):
            placement.place(os.path.join(dropin_dir, dropin), dropins[dropin])
        for present in placement.dropins_present(dropin_dir) or []:
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
