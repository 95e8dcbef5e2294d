#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpulaunch_facts
short_description: The node as gpulaunch sees it, as Ansible facts
description:
  - Runs C(gpulaunch facts --json) on the node and returns its answer as the fact
    C(gpulaunch), with the GPUs and their architectures, the driver, the CUDA toolkits and the
    venv's Python stack.
  - With I(profile), the facts that profile needs (its venv, model and port) are included.
  - Reads only; never changes the node.
version_added: "0.1.0"
author: gpulaunch developers
extends_documentation_fragment:
  - gpulaunch.fleet.gpulaunch
options:
  profile:
    description: Profile whose venv, model and port to include.
    type: str
attributes:
  check_mode:
    support: full
    description: Reads only; runs in check mode too.
"""

EXAMPLES = r"""
- name: Read the node
  gpulaunch.fleet.gpulaunch_facts:
    profile: k26-ar

- name: Refuse a node without its eight GPUs
  ansible.builtin.assert:
    that: ansible_facts.gpulaunch.gpus | length == 8
"""

RETURN = r"""
ansible_facts:
  description: The node's facts.
  returned: always
  type: dict
  contains:
    gpulaunch:
      description: The JSON document C(gpulaunch facts --json) prints, unchanged.
      type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpulaunch.fleet.plugins.module_utils.gpulaunch_cli import (
    GPULAUNCH_ARGUMENT_SPEC,
    run_gpulaunch_json,
)


def main():
    argument_spec = dict(profile=dict(type="str"))
    argument_spec.update(GPULAUNCH_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    args = ["facts", "--json"]
    if module.params["profile"]:
        args.append(module.params["profile"])
    facts = run_gpulaunch_json(module, args)
    module.exit_json(changed=False, ansible_facts=dict(gpulaunch=facts))


if __name__ == "__main__":
    main()
