#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The engine both supervisors restart in bench/supervise_bench.sh and bench/restart_bench.sh: the
# mock SGLang, with the moment it starts and the moment it ends appended to
# $BENCH_DIR/{starts,deaths} (ns since epoch), and the moment its Nth start's /health turned 200
# written to $BENCH_DIR/ready.N (MOCK_SGLANG_READY_FILE: epoch seconds); its own pid to
# $BENCH_DIR/pids, for a bench to end what is left of it.
echo $$ >> "$BENCH_DIR/pids"
date +%s%N >> "$BENCH_DIR/starts"
MOCK_SGLANG_READY_FILE="$BENCH_DIR/ready.$(wc -l < "$BENCH_DIR/starts")" \
  "$BENCH_VENV/bin/python" -m sglang.launch_server "$@"
rc=$?
date +%s%N >> "$BENCH_DIR/deaths"
exit $rc
