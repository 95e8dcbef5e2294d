#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Ansible collection (ansible/ansible_collections/gpulaunch/fleet) with Debian's ansible-core:
# ansible-doc for every module and the role, `ansible-test sanity` for every test that runs
# offline, and the modules against a fake gpulaunch (test_modules.py).
#
#   collection_test.sh SOURCE_DIR
#
# ansible-test wants the collection at a path ending in ansible_collections/NS/NAME and writes
# under it (tests/output), so it runs on a copy in a temporary directory.
set -euo pipefail

source_dir=$(realpath "$1")
collections=$source_dir/ansible
collection=$collections/ansible_collections/gpulaunch/fleet
# Debian's interpreter and tools first: ansible-core is installed for /usr/bin/python3 only.
export PATH=/usr/bin:/bin:/usr/sbin:/sbin
export ANSIBLE_COLLECTIONS_PATH=$collections ANSIBLE_NOCOLOR=1 LC_ALL=C.UTF-8
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in ansible-doc ansible-test ansible-playbook; do
  command -v "$tool" >/dev/null || fail "$tool missing: run scripts/install-deps.sh (installs ansible-core)"
done

work=$(mktemp -d /tmp/gl-ansible-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home  # ansible-test keeps its cache under ~/.ansible
mkdir -p "$HOME"

# --- ansible-doc: every module's documentation loads, and the role's argument spec ---------------
modules=()
for file in "$collection"/plugins/modules/*.py; do modules+=("gpulaunch.fleet.$(basename "$file" .py)"); done
((${#modules[@]} >= 4)) || fail "expected at least 4 modules, found ${modules[*]}"
listed=$(ansible-doc -t module -l gpulaunch.fleet 2>&1) || fail "ansible-doc -l: $listed"
for module in "${modules[@]}"; do
  grep -q "^$module " <<<"$listed" || fail "ansible-doc -l does not list $module: $listed"
  doc=$(ansible-doc -t module "$module" 2>&1) || fail "ansible-doc $module: $doc"
  grep -q "^EXAMPLES:" <<<"$doc" && grep -q "^RETURN VALUES:" <<<"$doc" ||
    fail "ansible-doc $module: no EXAMPLES or RETURN VALUES: $doc"
  ! grep -q "WARNING\|ERROR" <<<"$doc" || fail "ansible-doc $module warns: $(grep "WARNING\|ERROR" <<<"$doc")"
  echo "ansible-doc $module: ok"
done
role=$(ansible-doc -t role gpulaunch.fleet.gpulaunch 2>&1) || fail "ansible-doc -t role: $role"
grep -q "gpulaunch_force" <<<"$role" || fail "ansible-doc -t role: no gpulaunch_force: $role"
echo "ansible-doc -t role gpulaunch.fleet.gpulaunch: ok"
ansible-playbook --syntax-check "$collection/playbooks/rollout.yml" >/dev/null ||
  fail "ansible-playbook --syntax-check playbooks/rollout.yml"
echo "rollout.yml: syntax ok"

# --- the role's slurm.yml on this machine, against a scratch slurm.conf ------------------------------
# Prolog=/Epilog= named once (a second run changes nothing, reconfigures nothing), a site's own
# Prolog= refused unless gpulaunch_slurm_replace.
slurm=$work/slurm
mkdir -p "$slurm"
printf '#!/bin/sh\necho "$@" >>"%s/scontrol.calls"\n' "$slurm" >"$slurm/scontrol"
chmod +x "$slurm/scontrol"
cat >"$slurm/play.yml" <<YAML
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpulaunch.fleet.gpulaunch
        tasks_from: slurm
      vars:
        gpulaunch_slurm_conf: $slurm/slurm.conf
        gpulaunch_slurm_scontrol: $slurm/scontrol
YAML
play() { ansible-playbook -i localhost, "$slurm/play.yml" "$@" 2>&1; }
printf 'ClusterName=c\n#Prolog=/etc/slurm/example\nNodeName=node[1-2] Gres=gpu:2\n' >"$slurm/slurm.conf"
first=$(play) || fail "slurm.yml on a slurm.conf without a prolog: $first"
grep -qx 'Prolog=/usr/lib/gpulaunch/slurm/gpulaunch-prolog' "$slurm/slurm.conf" &&
  grep -qx 'Epilog=/usr/lib/gpulaunch/slurm/gpulaunch-epilog' "$slurm/slurm.conf" &&
  grep -qx '#Prolog=/etc/slurm/example' "$slurm/slurm.conf" ||
  fail "slurm.yml did not name the prolog and epilog: $(cat "$slurm/slurm.conf")"
[[ $(cat "$slurm/scontrol.calls") == reconfigure ]] || fail "no scontrol reconfigure after the change"
second=$(play) || fail "slurm.yml again: $second"
grep -q 'changed=0 ' <<<"$second" || fail "slurm.yml is not idempotent: $second"
[[ $(wc -l <"$slurm/scontrol.calls") == 1 ]] || fail "reconfigured without a change"
printf 'Prolog=/etc/slurm/site-prolog\n' >"$slurm/slurm.conf"
refused=$(play) && fail "slurm.yml replaced a site's own Prolog=: $refused"
grep -q 'has Prolog=/etc/slurm/site-prolog' <<<"$refused" || fail "the refusal does not say why: $refused"
[[ $(cat "$slurm/slurm.conf") == Prolog=/etc/slurm/site-prolog ]] || fail "slurm.conf changed on a refusal"
play -e gpulaunch_slurm_replace=true >/dev/null || fail "slurm.yml with gpulaunch_slurm_replace"
grep -qx 'Prolog=/usr/lib/gpulaunch/slurm/gpulaunch-prolog' "$slurm/slurm.conf" ||
  fail "gpulaunch_slurm_replace did not replace Prolog="
echo "role tasks_from slurm.yml: ok (named, idempotent, refuses a site's prolog)"

# --- ansible-test sanity -------------------------------------------------------------------------
# These create a virtual environment and bootstrap pip into it from the network
# (ci-files.testing.ansible.com), then pip-install pinned linters: they cannot run offline. The
# modules' documentation is loaded by ansible-doc above, and their imports by test_modules.py.
offline_impossible=(ansible-doc import pep8 pylint runtime-metadata validate-modules yamllint)
copy=$work/ansible_collections/gpulaunch/fleet
mkdir -p "$(dirname "$copy")"
cp -r "$collection" "$copy"
rm -rf "$copy/tests/output"
python=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
skips=()
for test in "${offline_impossible[@]}"; do
  echo "SKIP: ansible-test sanity --test $test: needs a virtual environment with pip from the network"
  skips+=(--skip-test "$test")
done
# PowerShell's linter needs pwsh, which Debian does not ship (and the collection has no .ps1).
if [[ ! -x /usr/bin/pwsh ]]; then
  echo "SKIP: ansible-test sanity --test pslint: no pwsh"
  skips+=(--skip-test pslint)
fi
(cd "$copy" && ansible-test sanity --local --python "$python" --color no "${skips[@]}") ||
  fail "ansible-test sanity"
echo "ansible-test sanity: ok ($(cd "$copy" && ansible-test sanity --list-tests 2>/dev/null | wc -l) tests, $((${#skips[@]} / 2)) skipped)"

# --- the modules against a fake gpulaunch --------------------------------------------------------
COLLECTIONS=$collections /usr/bin/python3 "$source_dir/tests/ansible/test_modules.py" ||
  fail "test_modules.py"
echo "PASS: ansible collection"
