#!/usr/bin/env bash
# Session 5, call 8: the whole GPU suite and memcheck on the shaped trials
# at the final commit.
set -u
R=/tmp/s5c8; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
timeout 330 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$?" >> "$S"
grep -E "^test result|FAILED|failed|^== " "$R/suite.log" >> "$S"
grep -A3 "^---- " "$R/suite.log" >> "$S"
SH=$(ls .gpu/bin/shapes-*); D=$(ls .gpu/bin/determinism-*)
for f in ops::sum_ ops::dot_ arg::ties; do
  REDUCTION_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $SH $f > "$R/memcheck-${f//:/_}.log" 2>&1; echo "memcheck shapes $f rc=$?" >> "$S"
  grep -E "ERROR SUMMARY|test result" "$R/memcheck-${f//:/_}.log" >> "$S"
done
REDUCTION_REQUIRE_GPU=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $D gpu_to_gpu::shaped_unaligned > "$R/memcheck-g2g.log" 2>&1; echo "memcheck g2g shaped_unaligned rc=$?" >> "$S"
grep -E "ERROR SUMMARY|test result" "$R/memcheck-g2g.log" >> "$S"
tar -cf "$OUT/s5c8.tar" -C /tmp s5c8
cat "$S"
