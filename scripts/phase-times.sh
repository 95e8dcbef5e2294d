# SPDX-License-Identifier: Apache-2.0
# Sourced by .ci/run and scripts/test.sh: `phase NAME COMMAND...` runs COMMAND and appends its wall
# time to $GL_TIMES (phase<TAB>NAME<TAB>SECONDS<TAB>STATUS); `phase_table` prints every phase and
# every ctest test ($GL_CTEST_JUNIT) slowest first (scripts/times-table.py). The first sourcer
# owns the file and prints the table when it exits, pass or fail, so growth is seen when it happens.
gl_times_table=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/times-table.py
if [[ -z ${GL_TIMES:-} ]]; then
  GL_TIMES=$(mktemp /tmp/gpulaunch-times.XXXXXX)
  GL_CTEST_JUNIT=${GL_TIMES}.junit.xml
  export GL_TIMES GL_CTEST_JUNIT
  trap 'status=$?; python3 "$gl_times_table" "$GL_TIMES" "$GL_CTEST_JUNIT" || true; rm -f "$GL_TIMES" "$GL_CTEST_JUNIT"; exit $status' EXIT
fi
phase() {
  local name=$1 started=$EPOCHREALTIME status=0
  shift
  "$@" || status=$?
  printf 'phase\t%s\t%s\t%s\n' "$name" \
    "$(python3 -c "print(f'{$EPOCHREALTIME - $started:.1f}')")" "$status" >>"$GL_TIMES"
  return "$status"
}
