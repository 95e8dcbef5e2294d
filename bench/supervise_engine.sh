#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The engine both supervisors restart in bench/supervise_bench.sh: the mock SGLang, with the
# moment it starts and the moment it ends appended to $BENCH_DIR/{starts,deaths} (ns since epoch).
date +%s%N >> "$BENCH_DIR/starts"
"$BENCH_VENV/bin/python" -m sglang.launch_server "$@"
rc=$?
date +%s%N >> "$BENCH_DIR/deaths"
exit $rc
