# SPDX-License-Identifier: Apache-2.0
"""The collection's modules against a fake gpulaunch (fake_gpulaunch.py): what each module runs,
and when it reports a change, in normal, check and diff mode.

    COLLECTIONS=ansible /usr/bin/python3 -m unittest tests/ansible/test_modules.py
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTIONS = os.path.abspath(os.environ.get("COLLECTIONS", os.path.join(HERE, "..", "..",
                                                                          "ansible")))
FAKE = os.path.join(HERE, "fake_gpulaunch.py")


def dry_run(action, refuse=False, errors=0, diff=""):
    return dict(profile="mna", unit="gpulaunch-mna.service",
                path="/etc/systemd/system/gpulaunch-mna.service", action=action,
                unit_changed=bool(diff), diff=diff,
                check=dict(errors=errors, warnings=1, refuse=refuse))


class ModuleTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gl-ansible-")
        self.addCleanup(shutil.rmtree, self.dir)

    def answers(self, **commands):
        """answer("up --dry-run"=(rc, stdout, stderr)) with spaces spelled as underscores."""
        table = {}
        for key, (rc, out, err) in commands.items():
            table[key.replace("__", " --").replace("_", "-")] = dict(
                rc=rc, stdout=out if isinstance(out, str) else json.dumps(out), stderr=err)
        with open(os.path.join(self.dir, "answers.json"), "w") as written:
            json.dump(table, written)

    def run_module(self, module, check=False, diff=False, **args):
        args.setdefault("gpulaunch_bin", FAKE)
        args.update(_ansible_check_mode=check, _ansible_diff=diff)
        path = os.path.join(self.dir, "args.json")
        with open(path, "w") as written:
            json.dump(dict(ANSIBLE_MODULE_ARGS=args), written)
        env = dict(os.environ, FAKE_GPULAUNCH_DIR=self.dir,
                   PYTHONPATH=os.pathsep.join([COLLECTIONS] + sys.path))
        run = subprocess.run(
            [sys.executable, "-m", "ansible_collections.gpulaunch.fleet.plugins.modules." + module,
             path], env=env, capture_output=True, text=True, check=False, cwd=self.dir)
        try:
            return json.loads(run.stdout)
        except ValueError:
            self.fail("%s printed no JSON: %s %s" % (module, run.stdout, run.stderr))
        return None

    def calls(self):
        path = os.path.join(self.dir, "calls")
        if not os.path.exists(path):
            return []
        with open(path) as calls:
            return [json.loads(line) for line in calls]


class ServiceTest(ModuleTest):
    def test_started_and_unchanged_runs_no_up(self):
        self.answers(up__dry_run=(0, dry_run("none"), ""))
        result = self.run_module("gpulaunch_service", name="mna")
        self.assertFalse(result.get("failed"), result)
        self.assertFalse(result["changed"])
        self.assertEqual(self.calls(), [["up", "mna", "--node-rank", "0", "--dry-run", "--json"]])

    def test_changed_unit_in_check_mode_is_reported_with_its_diff_not_started(self):
        diff = "--- a\n+++ b\n-old\n+new\n"
        self.answers(up__dry_run=(0, dry_run("restart", diff=diff), ""))
        result = self.run_module("gpulaunch_service", check=True, diff=True, name="mna")
        self.assertTrue(result["changed"], result)
        self.assertEqual(result["action"], "restart")
        self.assertEqual(result["diff"], {"prepared": diff})
        self.assertEqual(len(self.calls()), 1)  # the dry run only

    def test_start_runs_up_with_force(self):
        self.answers(up__dry_run=(0, dry_run("start", errors=2), ""), up=(0, "ready: mna\n", ""))
        result = self.run_module("gpulaunch_service", name="mna", force=True, node_rank=1)
        self.assertTrue(result["changed"], result)
        self.assertEqual(self.calls()[-1], ["up", "mna", "--node-rank", "1", "--force"])

    def test_check_refusal_fails_and_starts_nothing(self):
        self.answers(up__dry_run=(1, dry_run("start", refuse=True, errors=2), ""))
        result = self.run_module("gpulaunch_service", name="mna")
        self.assertTrue(result.get("failed"), result)
        self.assertIn("2 error(s)", result["msg"])
        self.assertIn("force", result["msg"])
        self.assertEqual(len(self.calls()), 1)

    def test_failed_up_fails_with_its_last_lines(self):
        self.answers(up__dry_run=(0, dry_run("start"), ""),
                     up=(1, "starting\n", "Failed to start gpulaunch-mna.service: job failed\n"))
        result = self.run_module("gpulaunch_service", name="mna")
        self.assertTrue(result.get("failed"), result)
        self.assertIn("Failed to start gpulaunch-mna.service: job failed", result["msg"])

    def test_all_nodes_changed_when_one_rank_starts(self):
        plan = dict(profile="mna", changed=True, ranks=[
            dict(rank=0, host="10.0.0.1", **dry_run("none")),
            dict(rank=1, host="10.0.0.2", **dry_run("start"))])
        self.answers(up__dry_run=(0, plan, ""))
        result = self.run_module("gpulaunch_service", check=True, name="mna", all_nodes=True)
        self.assertTrue(result["changed"], result)
        self.assertEqual(self.calls(), [["up", "mna", "--all-nodes", "--dry-run", "--json"]])

    def test_all_nodes_rank_without_an_answer_fails_naming_it(self):
        plan = dict(profile="mna", changed=False, ranks=[
            dict(rank=0, host="10.0.0.1", **dry_run("none")),
            dict(rank=1, host="10.0.0.2", error="exit 255: ssh: connect refused")])
        self.answers(up__dry_run=(2, plan, ""))
        result = self.run_module("gpulaunch_service", name="mna", all_nodes=True)
        self.assertTrue(result.get("failed"), result)
        self.assertIn("rank 1 (10.0.0.2): exit 255", result["msg"])

    def test_stopped_only_when_running(self):
        self.answers(status__json=(0, [dict(state="inactive")], ""))
        result = self.run_module("gpulaunch_service", name="mna", state="stopped")
        self.assertFalse(result["changed"], result)
        self.assertEqual(len(self.calls()), 1)
        self.answers(status__json=(0, [dict(state="activating")], ""))
        result = self.run_module("gpulaunch_service", name="mna", state="stopped")
        self.assertTrue(result["changed"], result)
        self.assertEqual(self.calls()[-1], ["down", "mna"])

    def test_stopped_not_installed_is_unchanged(self):
        self.answers(status__json=(3, [], "gpulaunch-mna.service is not installed\n"))
        result = self.run_module("gpulaunch_service", name="mna", state="stopped")
        self.assertFalse(result.get("failed"), result)
        self.assertFalse(result["changed"])

    def test_restarted_is_always_changed_and_not_run_in_check_mode(self):
        result = self.run_module("gpulaunch_service", check=True, name="mna", state="restarted")
        self.assertTrue(result["changed"])
        self.assertEqual(self.calls(), [])


class ProfileTest(ModuleTest):
    def test_lock_templated_into_a_dict_is_written_as_gpulaunch_writes_it(self):
        self.answers(show=(0, "", ""))
        lock = {"gpulaunch_lock": 1, "profile": {"name": "mna", "merged": "[a]\n"},
                "model": {"files": {}}}
        profiles = os.path.join(self.dir, "etc", "profiles")
        args = dict(name="mna", content="[engine]\nkind = \"sglang\"\n", lockfile=lock,
                    profiles_dir=profiles, lockfile_path=os.path.join(self.dir, "mna.lock"))
        first = self.run_module("gpulaunch_profile", **args)
        self.assertTrue(first["changed"], first)
        with open(os.path.join(self.dir, "mna.lock")) as written:
            self.assertEqual(written.read(), json.dumps(lock, indent=2) + "\n")
        again = self.run_module("gpulaunch_profile", **args)
        self.assertFalse(again["changed"], again)


    def profiles(self):
        path = os.path.join(self.dir, "etc", "profiles")
        os.makedirs(path)
        return path

    def test_a_linked_dropin_directory_is_refused_never_written_through(self):
        self.answers(show=(0, "", ""))
        profiles = self.profiles()
        elsewhere = os.path.join(self.dir, "elsewhere")
        os.makedirs(elsewhere)
        os.symlink(elsewhere, os.path.join(profiles, "mna.toml.d"))
        result = self.run_module("gpulaunch_profile", name="mna", content="[engine]\n",
                                 dropins={"10-port.toml": "[server]\nport = 1\n"},
                                 profiles_dir=profiles,
                                 lockfile_path=os.path.join(self.dir, "mna.lock"))
        self.assertTrue(result.get("failed"), result)
        self.assertEqual(result["msg"], "Refusing to write '%s/mna.toml.d/10-port.toml': "
                         "'%s/mna.toml.d' is a symbolic link or not a directory"
                         % (profiles, profiles))
        self.assertEqual(os.listdir(elsewhere), [])

    def test_a_link_in_the_lockfile_path_is_refused(self):
        self.answers(show=(0, "", ""))
        profiles = self.profiles()
        elsewhere = os.path.join(self.dir, "elsewhere")
        os.makedirs(elsewhere)
        os.symlink(elsewhere, os.path.join(self.dir, "locks"))
        result = self.run_module("gpulaunch_profile", name="mna", content="[engine]\n",
                                 lockfile="{}", profiles_dir=profiles,
                                 lockfile_path=os.path.join(self.dir, "locks", "mna.lock"))
        self.assertTrue(result.get("failed"), result)
        self.assertEqual(os.listdir(elsewhere), [])

    def test_names_gpulaunch_would_refuse_or_read_as_options_are_refused(self):
        self.answers(show=(0, "", ""))
        profiles = self.profiles()
        rule = ("letters, digits, '-', '_', '.', not starting with '.' or '-', at most 64 "
                "characters")
        named = self.run_module("gpulaunch_profile", name="--help", content="[engine]\n",
                                profiles_dir=profiles)
        self.assertTrue(named.get("failed"), named)
        self.assertEqual(named["msg"], "'--help' is not a valid profile name (%s)" % rule)
        dropin = self.run_module("gpulaunch_profile", name="mna", content="[engine]\n",
                                 dropins={"--help.toml": ""}, profiles_dir=profiles)
        self.assertTrue(dropin.get("failed"), dropin)
        self.assertEqual(dropin["msg"], "drop-in name '--help.toml' must be NAME.toml, NAME %s"
                         % rule)
        for bad in ("a b", "x" * 65, ".hidden", "caf\u00e9"):
            self.assertTrue(self.run_module("gpulaunch_profile", name=bad, content="",
                                            profiles_dir=profiles).get("failed"), bad)
        self.assertEqual(self.calls(), [])
        self.assertEqual(os.listdir(profiles), [])

    def test_the_name_rule_is_gpulaunchs(self):
        source = os.path.join(HERE, "..", "..", "src", "profile", "profile_name.cpp")
        module = os.path.join(COLLECTIONS, "ansible_collections", "gpulaunch", "fleet", "plugins",
                              "modules", "gpulaunch_profile.py")
        with open(source) as cpp, open(module) as py:
            cpp_rule = re.search(r'kRule =\s*"([^"]*)"', cpp.read()).group(1)
            py_rule = re.search(r'PROFILE_NAME_RULE = \(\s*"([^"]*)"\)', py.read()).group(1)
        self.assertEqual(py_rule, cpp_rule)

    def test_a_replaced_file_is_roots_and_0644_whoever_owned_it(self):
        self.answers(show=(0, "", ""))
        profiles = self.profiles()
        path = os.path.join(profiles, "mna.toml")
        with open(path, "w") as old:
            old.write("[old]\n")
        os.chmod(path, 0o666)
        if os.geteuid() == 0:
            os.chown(path, 65534, 65534)
        result = self.run_module("gpulaunch_profile", name="mna", content="[engine]\n",
                                 profiles_dir=profiles)
        self.assertTrue(result["changed"], result)
        info = os.stat(path)
        self.assertEqual(info.st_mode & 0o7777, 0o644)
        if os.geteuid() == 0:
            self.assertEqual((info.st_uid, info.st_gid), (0, 0))
        with open(path) as placed:
            self.assertEqual(placed.read(), "[engine]\n")
        self.assertEqual([f for f in os.listdir(profiles) if f.startswith(".tmp-")], [])


class VerifyTest(ModuleTest):
    DRIFT = dict(lock="/l.lock", profile="mna", ok=False, notes=[], drift=[
        dict(field="node.toolkit.version", locked="13.0", node="12.9", why="nvcc")])

    def test_drift_fails_with_the_table(self):
        self.answers(verify=(1, self.DRIFT, ""))
        result = self.run_module("gpulaunch_verify", lock="/l.lock")
        self.assertTrue(result.get("failed"), result)
        self.assertIn("node.toolkit.version  13.0    12.9  nvcc", result["msg"])
        self.assertEqual(result["drift"], self.DRIFT["drift"])
        self.assertEqual(self.calls(), [["verify", "/l.lock", "--json"]])

    def test_drift_only_reported_is_ok_and_unchanged(self):
        self.answers(verify=(1, self.DRIFT, ""))
        result = self.run_module("gpulaunch_verify", lock="/l.lock", profile="mna",
                                 fail_on_drift=False)
        self.assertFalse(result.get("failed"), result)
        self.assertFalse(result["changed"])
        self.assertFalse(result["ok"])

    def test_could_not_run_fails_whatever_fail_on_drift_says(self):
        self.answers(verify=(2, "", "Failed to open '/l.lock': No such file or directory\n"))
        result = self.run_module("gpulaunch_verify", lock="/l.lock", fail_on_drift=False)
        self.assertTrue(result.get("failed"), result)
        self.assertIn("Failed to open '/l.lock'", result["msg"])


if __name__ == "__main__":
    unittest.main()
