#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package as an operator gets it: built by packaging/build-deb.sh, checked by lintian
# (errors fail, everything else is printed), its file list and dependencies, and the binary run from
# the package's own files. The real dpkg -i -> use -> dpkg --purge cycle changes the machine, so it
# runs only where allowed (CI=true or GPULAUNCH_ALLOW_DPKG=1) and must leave no file behind.
# With DEB_OUT, the .deb is also left there for the tests that install it elsewhere (tests/vm/).
# With BUILD_DIR, the package is made from that tree's objects (build-deb.sh --prebuilt: the tree
# scripts/build.sh built with the package's own flags), not compiled a second time; a tree
# configured otherwise is said so and the package is compiled from the sources.
# Usage: package_test.sh SOURCE_DIR [DEB_OUT [BUILD_DIR]]
set -uo pipefail
src=$(cd "$1" && pwd)
deb_out=${2:-}
build_dir=${3:-}
failures=0
check() {  # description, then a command that must succeed
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}
scratch=$(mktemp -d)
installed_here=0
cleanup() {
  # A failure halfway through the cycle must not leave the package on the machine.
  if ((installed_here)); then dpkg --purge gpulaunch >/dev/null 2>&1; fi
  rm -rf "$scratch"
}
trap cleanup EXIT
started=$SECONDS

version=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version)
if [[ -n ${GPULAUNCH_TEST_DEB:-} ]]; then
  # Iterating on this script: check a .deb already built, rather than build one.
  mkdir -p "$scratch/out"
  cp "$GPULAUNCH_TEST_DEB" "$scratch/out/"
  echo "== using prebuilt $GPULAUNCH_TEST_DEB"
else
  prebuilt=()
  if [[ -n $build_dir ]]; then
    if bash "$src/packaging/build-deb.sh" --prebuilt "$build_dir" "$scratch/out" >"$scratch/build.log" 2>&1; then
      echo "== packaged gpulaunch $version from the tested build tree $build_dir"
      prebuilt=(done)
    else
      grep '^build-deb:' "$scratch/build.log"
      echo "   $build_dir cannot be packaged as it is: compiling the package from the sources"
    fi
  fi
  if ((${#prebuilt[@]} == 0)); then
    echo "== building gpulaunch $version"
    if ! bash "$src/packaging/build-deb.sh" "$scratch/out" >"$scratch/build.log" 2>&1; then
      tail -n 60 "$scratch/build.log"
      echo "FAIL packaging/build-deb.sh (log tail above)"
      exit 1
    fi
  fi
fi
deb=$(echo "$scratch"/out/gpulaunch_"$version"_*.deb)
check "build-deb.sh produced $(basename "$deb")" test -f "$deb"
if [[ -n $deb_out && -f $deb ]]; then
  # Only this build's package there: the VM tier must never boot a stale one.
  mkdir -p "$deb_out"
  rm -f "$deb_out"/gpulaunch_*.deb
  cp "$deb" "$deb_out/"
fi
echo "   (built in $((SECONDS - started))s)"

echo "== lintian"
# -I: informational tags are printed too; only errors fail.
lintian -I --fail-on none "$deb" >"$scratch/lintian.txt" 2>&1
cat "$scratch/lintian.txt"
check "lintian reports no errors" bash -c "! grep -q '^E:' '$scratch/lintian.txt'"
check "lintian ran" bash -c "! grep -qi 'command not found\|^internal error' '$scratch/lintian.txt'"

echo "== contents"
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$scratch/files.txt"
has() { grep -qxF "$1" "$scratch/files.txt"; }
for path in /usr/bin/gpulaunch /usr/bin/gpulaunch-record-start /usr/share/man/man1/gpulaunch.1.gz \
  /usr/share/man/man5/gpulaunch.toml.5.gz /usr/share/bash-completion/completions/gpulaunch \
  /lib/systemd/system/gpulaunch-check@.service /usr/lib/sysusers.d/gpulaunch.conf \
  /lib/systemd/system/gpulaunch-metrics.service /lib/systemd/system/gpulaunch-metrics.timer \
  /lib/systemd/system/gpulaunch-nvidia-devices.service \
  /usr/share/gpulaunch/grafana/gpulaunch.json /usr/lib/systemd/catalog/gpulaunch.catalog \
  /etc/gpulaunch/profiles/ /usr/share/doc/gpulaunch/copyright \
  /usr/lib/gpulaunch/slurm/gpulaunch-prolog /usr/lib/gpulaunch/slurm/gpulaunch-epilog \
  /usr/lib/gpulaunch/gpulaunch-archive.so; do
  check "ships $path" has "$path"
done
for profile in "$src"/profiles/*.toml; do
  check "ships example profile $(basename "$profile")" \
    has "/usr/share/gpulaunch/profiles/$(basename "$profile")"
done
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/gpulaunch/copyright >"$scratch/copyright"
check "copyright states Apache-2.0 for every file" \
  bash -c "grep -qx 'Files: \*' '$scratch/copyright' && grep -qx 'License: Apache-2.0' '$scratch/copyright'"
check "lintian has nothing to say about the copyright file" \
  bash -c "! grep -E '^[EWI]: .*copyright' '$scratch/lintian.txt'"
# Anything else (headers, static libraries, test binaries) would be a packaging mistake.
own='^/($|etc/(gpulaunch/.*)?$|lib/(systemd/(system/.*)?)?$|usr/(bin/(gpulaunch(-record-start)?)?|lib/(systemd/(catalog/.*)?|sysusers.d/.*|gpulaunch/(slurm/(gpulaunch-(prolog|epilog))?|gpulaunch-archive\.so)?)?|share/((man|doc|gpulaunch|bash-completion|lintian)/.*)?)?$)'
stray=$(grep -vE "$own" "$scratch/files.txt")
check "ships nothing outside its own paths${stray:+: $stray}" test -z "$stray"
depends=$(dpkg-deb -f "$deb" Depends)
echo "   Depends: $depends"
check "Depends computed from linked libraries (libc6, libstdc++6)" \
  grep -qE 'libc6 \(>= .*libstdc\+\+6 \(>= |libstdc\+\+6 \(>= .*libc6 \(>= ' <<<"$depends"
# libsystemd is loaded at run time (src/systemd/libsystemd.hpp), so dpkg-shlibdeps cannot see it.
check "Depends names libsystemd0, loaded at the first call to systemd" \
  grep -q 'libsystemd0 (>= 252)' <<<"$depends"
check "Depends lists a sysusers provider" grep -q 'systemd | systemd-standalone-sysusers' <<<"$depends"

echo "== the package's own files"
root=$scratch/root
dpkg-deb -x "$deb" "$root"
gl=$root/usr/bin/gpulaunch
mkdir -p "$scratch/home" "$scratch/cwd"
cd "$scratch/cwd"  # no ./profiles here; HOME below has no profiles either
export HOME=$scratch/home
unset XDG_CONFIG_HOME
check "gpulaunch --version reports the package version" \
  test "$("$gl" --version)" = "gpulaunch $version"
out=$("$gl" -P "$root/usr/share/gpulaunch/profiles" list)
check "list finds k26-ar in the package's profiles" \
  grep -qE "^k26-ar +sglang .* $root/usr/share/gpulaunch/profiles/k26-ar.toml$" <<<"$out"
unit=$("$gl" -P "$root/usr/share/gpulaunch/profiles" render k26-ar)
check "render k26-ar pins CUDA_HOME" grep -qx 'Environment="CUDA_HOME=/usr/local/cuda-13.0"' <<<"$unit"
check "render k26-ar runs the extracted binary" grep -q "^ExecStart=\"$gl\" \"run\"" <<<"$unit"
# The Slurm prolog as slurmd runs it, with the package's gpulaunch: this machine has no GPU, so
# the node passes and nothing is drained (a scontrol that records would show a call).
printf '#!/bin/sh\necho "$@" >>"%s/scontrol.calls"\n' "$scratch" >"$scratch/scontrol"
chmod +x "$scratch/scontrol"
check "the packaged Slurm prolog lets a job run on a node without GPUs" \
  env -i GPULAUNCH="$gl" SCONTROL="$scratch/scontrol" SLURMD_NODENAME=node1 SLURM_JOB_ID=7 \
  "$root/usr/lib/gpulaunch/slurm/gpulaunch-prolog"
check "... and drains nothing" test ! -e "$scratch/scontrol.calls"
check "internal-man is hidden from --help" bash -c "! '$gl' --help | grep -q internal-man"
check "the journal catalog is the binary's own" \
  bash -c "'$gl' internal-catalog | cmp -s - '$root/usr/lib/systemd/catalog/gpulaunch.catalog'"

for page in man1/gpulaunch.1.gz man5/gpulaunch.toml.5.gz; do
  # What lintian runs, shown directly: groff warnings would otherwise be a lintian tag away.
  warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
    man --warnings -E UTF-8 -l -Tutf8 -Z "$root/usr/share/man/$page" 2>&1 >/dev/null)
  check "$page formats without warnings${warnings:+: $warnings}" test -z "$warnings"
done
man1=$(MANWIDTH=100 man -l "$root/usr/share/man/man1/gpulaunch.1.gz" 2>/dev/null)
for command in list show render; do
  check "gpulaunch(1) documents '$command'" grep -qE "^ +$command( |$)" <<<"$man1"
done
check "gpulaunch(1) documents --node-rank" grep -q -- '--node-rank' <<<"$man1"
check "gpulaunch(1) shows the package version" grep -q "gpulaunch $version" <<<"$man1"
man5=$(MANWIDTH=100 man -l "$root/usr/share/man/man5/gpulaunch.toml.5.gz" 2>/dev/null)
for key in cuda_graph_max_bs dist_init_addr eagle_topk arch_list ready_timeout stable_after \
  memory_max unit_extra; do
  check "gpulaunch.toml(5) documents '$key'" grep -qE "^ +$key " <<<"$man5"
done

completion=$root/usr/share/bash-completion/completions/gpulaunch
check "bash completion parses" bash -n "$completion"
if [[ -f /usr/share/bash-completion/bash_completion ]]; then
  complete_line() {  # words of a command line ending in the word being completed
    PATH=$root/usr/bin:$PATH bash -c '
      source /usr/share/bash-completion/bash_completion
      source "$0"
      COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
      _gpulaunch; printf "%s\n" "${COMPREPLY[@]}"' "$completion" "$@"
  }
  check "completion offers subcommands" grep -qx render <<<"$(complete_line gpulaunch re)"
  check "completion hides internal-man" bash -c "! grep -q internal <<<'$(complete_line gpulaunch "")'"
  check "completion offers profile names from -P" grep -qx k26-ar \
    <<<"$(complete_line gpulaunch -P "$root/usr/share/gpulaunch/profiles" render k26-a)"
  check "completion offers subcommand options" grep -qx -- --node-rank \
    <<<"$(complete_line gpulaunch render --no)"
  # Commands with verbs: the verbs first (issue 46), then the verb's profiles and options.
  check "completion offers gate's verbs, not profiles" test "$(complete_line gpulaunch gate "")" = "record
check"
  check "completion offers cache's verbs" grep -qx export <<<"$(complete_line gpulaunch cache "")"
  check "completion offers profiles after a verb" grep -qx k26-ar \
    <<<"$(complete_line gpulaunch -P "$root/usr/share/gpulaunch/profiles" gate record k26-a)"
  check "completion offers a verb's options" grep -qx -- --json \
    <<<"$(complete_line gpulaunch gate check --js)"
else
  echo "skip completion behaviour: bash-completion is not installed"
fi
echo "   (non-invasive part done at $((SECONDS - started))s)"

if [[ ${CI:-} != true && ${GPULAUNCH_ALLOW_DPKG:-} != 1 ]]; then
  echo "skipping dpkg cycle: set CI=true or GPULAUNCH_ALLOW_DPKG=1"
  echo "$failures failure(s)"
  exit $((failures > 0))
fi

echo "== dpkg -i -> use -> dpkg --purge"
if dpkg-query -W -f='${Status}' gpulaunch 2>/dev/null | grep -q installed; then
  echo "FAIL gpulaunch is already installed here; refusing to purge someone's installation"
  exit 1
fi
# Paths only. The account databases change in place and stay: Debian keeps system users, so the
# gpulaunch user outlives the package by design (packaging/README.md), and sysusers may write the
# "-" backups and lock file the first time.
snapshot() {
  find /usr /etc /var/lib/gpulaunch /var/cache/gpulaunch /var/lib/systemd/deb-systemd-helper-enabled \
    /var/lib/systemd/deb-systemd-user-helper-enabled -xdev 2>/dev/null |
    grep -vxE '/etc/(passwd|group|shadow|gshadow)-?|/etc/\.pwd\.lock' | sort
}
snapshot >"$scratch/before.txt"
if DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$scratch/dpkg-i.log" 2>&1; then
  installed_here=1
  check "dpkg -i" true
else
  installed_here=1
  cat "$scratch/dpkg-i.log"
  check "dpkg -i" false
fi
dpkg -L gpulaunch >"$scratch/dpkg-L.txt" 2>/dev/null
cd /
check "installed gpulaunch --version" test "$(gpulaunch --version 2>&1)" = "gpulaunch $version"
out=$(gpulaunch list 2>&1)
check "installed list finds /usr/share/gpulaunch/profiles from /" \
  grep -qE '^k26-ar +sglang .* /usr/share/gpulaunch/profiles/k26-ar.toml$' <<<"$out"
check "installed /etc/gpulaunch/profiles exists" test -d /etc/gpulaunch/profiles
check "postinst created the gpulaunch user" bash -c "id gpulaunch >/dev/null"
# dh_installsystemd's postinst enables the units (deb-systemd-helper makes the [Install] links
# whether or not systemd runs here): the boot starts the devices unit and the metrics timer.
check "postinst enabled gpulaunch-metrics.timer" \
  test -L /etc/systemd/system/timers.target.wants/gpulaunch-metrics.timer
check "postinst enabled gpulaunch-nvidia-devices.service" \
  test -L /etc/systemd/system/multi-user.target.wants/gpulaunch-nvidia-devices.service
check "postinst enabled no template" \
  bash -c '! ls /etc/systemd/system/*.wants/gpulaunch-check@* 2>/dev/null'
# State the way a profile's use leaves it; purge takes it away.
mkdir -p /var/lib/gpulaunch/k26-ar /var/cache/gpulaunch/k26-ar/flashinfer
echo '{}' >/var/lib/gpulaunch/k26-ar/events.jsonl
ln -s /etc/hostname /var/cache/gpulaunch/k26-ar/flashinfer/link
check "the gpulaunch user is in video" bash -c "id -nG gpulaunch | grep -qw video"
if getent group render >/dev/null; then
  check "the gpulaunch user is in render" bash -c "id -nG gpulaunch | grep -qw render"
fi
mkdir -p "$scratch/units"
gpulaunch render k26-ar >"$scratch/units/k26-ar.service"
check "installed render names /usr/bin/gpulaunch" \
  grep -q '^ExecStart="/usr/bin/gpulaunch" "run"' "$scratch/units/k26-ar.service"
check "installed render runs /usr/bin/gpulaunch-record-start after READY=1" \
  grep -q '^ExecStartPost=-+"/usr/bin/env" -i .* "/usr/bin/gpulaunch-record-start" "--profile=k26-ar"' \
  "$scratch/units/k26-ar.service"
verify() {  # unit file: systemd-analyze verify passes and says nothing
  local log
  log=$(systemd-analyze verify "$1" 2>&1)
  local status=$?
  [[ -n $log ]] && echo "$log"
  ((status == 0)) && [[ -z $log ]]
}
check "systemd-analyze verify on the rendered k26-ar.service" verify "$scratch/units/k26-ar.service"
# An instance of the shipped template, as `systemctl enable gpulaunch-check@k26-ar` would load it.
cp /lib/systemd/system/gpulaunch-check@.service "$scratch/units/gpulaunch-check@k26-ar.service"
check "systemd-analyze verify on gpulaunch-check@k26-ar.service" \
  verify "$scratch/units/gpulaunch-check@k26-ar.service"
for unit in gpulaunch-metrics.service gpulaunch-metrics.timer; do
  check "systemd-analyze verify on $unit" verify "/lib/systemd/system/$unit"
done
check "man finds gpulaunch(1)" bash -c 'man -w gpulaunch >/dev/null'
check "man finds gpulaunch.toml(5)" bash -c 'man -w 5 gpulaunch.toml >/dev/null'

if dpkg --purge gpulaunch >"$scratch/dpkg-purge.log" 2>&1; then
  installed_here=0
  check "dpkg --purge" true
else
  cat "$scratch/dpkg-purge.log"
  check "dpkg --purge" false
fi
check "dpkg no longer knows gpulaunch" bash -c "! dpkg-query -W -f='\${Status}' gpulaunch 2>/dev/null | grep -q ."
check "/etc/gpulaunch is gone" test ! -e /etc/gpulaunch
left=0
while read -r path; do  # dpkg -L as installed: new paths must be gone again
  # Compared as resolved: /lib is /usr/lib on a merged /usr, and the snapshot lists /usr.
  if [[ $path != /. && ( -e $path || -L $path ) ]] &&
    ! grep -qxF "$(realpath -m "$path")" "$scratch/before.txt"; then
    echo "   left behind: $path"
    left=$((left + 1))
  fi
done <"$scratch/dpkg-L.txt"
check "no path the package installed remains" test "$left" -eq 0
snapshot >"$scratch/after.txt"
# Purge takes gpulaunch's state and cache roots away, whatever they held (packaging/README.md);
# everything else is as it was before the install.
roots='^/var/(lib|cache)/gpulaunch(/|$)'
diff <(grep -vE "$roots" "$scratch/before.txt") <(grep -vE "$roots" "$scratch/after.txt") \
  >"$scratch/diff.txt"
cat "$scratch/diff.txt"
check "/usr, /etc and the helpers' records as before" test ! -s "$scratch/diff.txt"
# (Only what this test put there is judged: other tests of the suite, run beside this one as
# root, may write the probe cache under /var/lib/gpulaunch again at any time.)
check "purge removed the state and caches under /var/lib/gpulaunch and /var/cache/gpulaunch" \
  test ! -e /var/lib/gpulaunch/k26-ar -a ! -e /var/cache/gpulaunch/k26-ar
check "purge left what a link in the cache pointed at" test -f /etc/hostname

echo "   (done in $((SECONDS - started))s)"
echo "$failures failure(s)"
exit $((failures > 0))
