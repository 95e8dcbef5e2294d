#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpulaunch_service
short_description: Start, stop or restart a gpulaunch profile's service
description:
  - C(state=started) runs C(gpulaunch up NAME), which installs the profile's unit, starts it (or
    restarts it when its unit changed) and waits until the engine serves. It first asks
    C(gpulaunch up NAME --dry-run --json) what C(up) would do, and is C(changed) only when that is
    a start or a restart; a running engine whose unit is unchanged is left alone.
  - C(state=stopped) runs C(gpulaunch down NAME), and is C(changed) only when
    C(gpulaunch status NAME --json) shows the unit active, activating, reloading or deactivating.
  - C(state=restarted) runs C(gpulaunch restart NAME) and is always C(changed).
  - With I(all_nodes), the whole multi-node group of the profile (its C(nodes.hosts)) is acted on
    from this node over ssh (C(--all-nodes)); run such a task once per group (C(run_once)),
    since the ranks of one group start together.
  - A failed command fails the task with the last lines gpulaunch printed.
version_added: "0.1.0"
author: gpulaunch developers
extends_documentation_fragment:
  - gpulaunch.fleet.gpulaunch
options:
  name:
    description: The profile's name.
    type: str
    required: true
  state:
    description: What the service should be.
    type: str
    choices: [started, stopped, restarted]
    default: started
  node_rank:
    description: This node's rank in a multi-node profile (C(up --node-rank)). Ignored with
      I(all_nodes).
    type: int
    default: 0
  all_nodes:
    description: Act on every rank of the profile's C(nodes.hosts) at once, over ssh.
    type: bool
    default: false
  force:
    description: Start even when C(gpulaunch check) finds errors on a node (C(up --force)).
      Without it, a node whose check finds errors fails the task.
    type: bool
    default: false
  scope:
    description: The systemd manager, C(system) or the calling user's (C(user)). Not with
      I(all_nodes).
    type: str
    choices: [system, user]
    default: system
  runtime:
    description: Install the unit under C(/run/systemd/system), gone at reboot (C(up --runtime)).
    type: bool
    default: false
  purge:
    description: With C(state=stopped), also remove the unit files (C(down --purge)).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reports what C(up), C(down) or C(restart) would do, without doing it.
  diff_mode:
    support: full
    description: With C(state=started), the unit file's diff that C(up) would install.
notes:
  - C(changed) for C(state=started) comes from C(gpulaunch up --dry-run), so it follows the same
    decision C(up) makes (the rendered unit against the installed one, the unit's state).
"""

EXAMPLES = r"""
- name: Serve k26-ar on this node
  gpulaunch.fleet.gpulaunch_service:
    name: k26-ar
    state: started

- name: Start a two-node group from its rank 0, once
  gpulaunch.fleet.gpulaunch_service:
    name: k26-2n
    state: started
    all_nodes: true
  run_once: true

- name: Stop it
  gpulaunch.fleet.gpulaunch_service:
    name: k26-ar
    state: stopped
"""

RETURN = r"""
action:
  description: What was (or in check mode would be) done, C(none), C(start), C(restart) or
    C(stop). With I(all_nodes), C(start) stands for the group's C(up --all-nodes), which starts
    or restarts each rank as that rank's dry run said.
  returned: always
  type: str
  sample: restart
plan:
  description: The answer of C(gpulaunch up --dry-run --json) (with I(all_nodes), per rank under
    C(ranks)).
  returned: with C(state=started)
  type: dict
  sample: {"profile": "k26-ar", "unit": "gpulaunch-k26-ar.service", "action": "restart",
           "unit_changed": true, "diff": "...", "check": {"errors": 0, "warnings": 1,
           "refuse": false}}
status:
  description: The answer of C(gpulaunch status --json) before stopping (with I(all_nodes), per
    rank under C(ranks)).
  returned: with C(state=stopped)
  type: raw
stdout:
  description: What the command that acted printed.
  returned: when a command acted
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpulaunch.fleet.plugins.module_utils.gpulaunch_cli import (
    DRY_RUN_REFUSES,
    GPULAUNCH_ARGUMENT_SPEC,
    fail_with_output,
    parse_json,
    run_gpulaunch,
)

# `gpulaunch status` exits 3 for a unit that is not installed (as systemctl does).
STATUS_NOT_INSTALLED = 3
# Unit states in which `down` has something to stop.
RUNNING_STATES = ("active", "activating", "reloading", "deactivating")


def where_args(params):
    """The arguments naming the manager and the rank(s)."""
    if params["all_nodes"]:
        return ["--all-nodes"]
    args = []
    if params["scope"] == "user":
        args.append("--user")
    return args


def up_args(params):
    args = ["up", params["name"]] + where_args(params)
    if not params["all_nodes"]:
        args += ["--node-rank", str(params["node_rank"])]
        if params["runtime"]:
            args.append("--runtime")
    if params["force"]:
        args.append("--force")
    return args


def rank_errors(module, what, answer):
    """Fails the task naming each rank that gave no answer (`--all-nodes`)."""
    failed = [rank for rank in answer.get("ranks", []) if "error" in rank]
    if failed:
        module.fail_json(msg="gpulaunch %s: %s" % (what, "; ".join(
            "rank %s (%s): %s" % (rank["rank"], rank["host"], rank["error"]) for rank in failed)),
            answer=answer)


def planned(module):
    """`up --dry-run --json`: what `up` would do; fails the task where `up` would refuse."""
    args = up_args(module.params) + ["--dry-run", "--json"]
    rc, out, err = run_gpulaunch(module, args)
    if not out.strip().startswith("{"):
        fail_with_output(module, args, rc, out, err)
    plan = parse_json(module, args, out, err)
    if module.params["all_nodes"]:
        rank_errors(module, "up --dry-run", plan)
        ranks = plan["ranks"]
    else:
        ranks = [plan]
    refusing = [rank for rank in ranks if rank.get("check", {}).get("refuse")]
    if refusing:
        module.fail_json(
            msg="gpulaunch up would refuse %s: the check found errors on %s; fix them, or set "
                "force to start anyway" % (module.params["name"], ", ".join(
                    "rank %s (%s): %d error(s)" % (rank.get("rank", module.params["node_rank"]),
                                                  rank.get("host", "this node"),
                                                  rank["check"]["errors"]) for rank in refusing)),
            plan=plan, stderr=err)
    if rc != 0:
        fail_with_output(module, args, rc, out, err, plan=plan)
    return plan, ranks


def started(module, result):
    plan, ranks = planned(module)
    result["plan"] = plan
    actions = [rank.get("action", "start") for rank in ranks]
    if module.params["all_nodes"]:
        changed = plan["changed"]
        action = "start" if changed else "none"
    else:
        action = actions[0]
        changed = action != "none"
    result["action"] = action
    result["changed"] = changed
    if module._diff:
        diffs = [rank.get("diff", "") for rank in ranks if rank.get("diff")]
        if diffs:
            result["diff"] = dict(prepared="\n".join(diffs))
    if changed and not module.check_mode:
        act(module, up_args(module.params), result)


def stopped(module, result):
    args = ["status", module.params["name"], "--json"] + where_args(module.params)
    rc, out, err = run_gpulaunch(module, args)
    if rc not in (0, STATUS_NOT_INSTALLED):
        fail_with_output(module, args, rc, out, err)
    status = parse_json(module, args, out, err)
    result["status"] = status
    if module.params["all_nodes"]:
        rank_errors(module, "status", status)
        states = [rank.get("state") for rank in status["ranks"]]
    else:
        states = [unit.get("state") for unit in status]
    changed = any(state in RUNNING_STATES for state in states)
    result["action"] = "stop" if changed else "none"
    result["changed"] = changed
    if changed and not module.check_mode:
        args = ["down", module.params["name"]] + where_args(module.params)
        if module.params["purge"]:
            args.append("--purge")
        if module.params["runtime"] and not module.params["all_nodes"]:
            args.append("--runtime")
        act(module, args, result)


def restarted(module, result):
    result["action"] = "restart"
    result["changed"] = True
    if module.check_mode:
        return
    args = ["restart", module.params["name"]] + where_args(module.params)
    act(module, args, result)


def act(module, args, result):
    rc, out, err = run_gpulaunch(module, args)
    if rc != 0:
        fail_with_output(module, args, rc, out, err, **result)
    result["stdout"] = out


def main():
    argument_spec = dict(
        name=dict(type="str", required=True),
        state=dict(type="str", choices=["started", "stopped", "restarted"], default="started"),
        node_rank=dict(type="int", default=0),
        all_nodes=dict(type="bool", default=False),
        force=dict(type="bool", default=False),
        scope=dict(type="str", choices=["system", "user"], default="system"),
        runtime=dict(type="bool", default=False),
        purge=dict(type="bool", default=False),
    )
    argument_spec.update(GPULAUNCH_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if module.params["all_nodes"] and module.params["scope"] == "user":
        module.fail_json(msg="all_nodes acts on the system manager of every rank; not with "
                             "scope=user")
    result = dict(changed=False, action="none")
    {"started": started, "stopped": stopped, "restarted": restarted}[module.params["state"]](
        module, result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
