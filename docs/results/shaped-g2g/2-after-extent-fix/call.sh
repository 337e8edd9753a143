#!/usr/bin/env bash
# Session 5, call 2: after the extent fix: the whole GPU suite again,
# memcheck on the shaped gpu_to_gpu trials (one filter per run).
set -u
R=/tmp/s5c2; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
D=$(ls .gpu/bin/determinism-*)
timeout 300 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$?" >> "$S"
grep -E "^test result|FAILED|failed|^== " "$R/suite.log" >> "$S"
grep -A3 "^---- " "$R/suite.log" >> "$S"
for f in gpu_to_gpu::shaped_unaligned gpu_to_gpu::shaped_dot_f64 errors::shaped; do
  REDUCTION_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $D $f > "$R/memcheck-${f##*::}.log" 2>&1; echo "memcheck $f rc=$?" >> "$S"
  grep -E "ERROR SUMMARY|test result" "$R/memcheck-${f##*::}.log" >> "$S"
done
tar -cf "$OUT/s5c2.tar" -C /tmp s5c2
cat "$S"
