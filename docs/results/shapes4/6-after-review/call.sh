#!/usr/bin/env bash
# Session 5, call 9: after the review (the twin follows the plan's kernel):
# the determinism and shapes binaries, GPU required.
set -u
R=/tmp/s5c9; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
export REDUCTION_REQUIRE_GPU=1
for t in determinism shapes api; do
  B=$(ls .gpu/bin/$t-*)
  timeout 150 $B > "$R/$t.log" 2>&1; echo "$t rc=$?" >> "$S"
  grep -E "^test result|FAILED" "$R/$t.log" >> "$S"
done
tar -cf "$OUT/s5c9.tar" -C /tmp s5c9
cat "$S"
