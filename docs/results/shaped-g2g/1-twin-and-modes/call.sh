#!/usr/bin/env bash
# Session 5, call 1: issue 14's shaped gpu_to_gpu (GPU bits == CPU twin),
# the whole GPU suite (with_inputs changed for every operation), memcheck
# on the shaped gpu_to_gpu trials, and the shaped timing in both modes.
set -u
R=/tmp/s5c1; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
D=$(ls .gpu/bin/determinism-*)
timeout 300 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$?" >> "$S"
grep -E "^test result|FAILED|failed|^== " "$R/suite.log" >> "$S"
grep -E "shaped|errors::" "$R/suite.log" >> "$S"
REDUCTION_REQUIRE_GPU=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $D gpu_to_gpu::shaped_unaligned gpu_to_gpu::shaped_sum_f32 gpu_to_gpu::shaped_dot_f64 > "$R/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$S"
tail -3 "$R/memcheck.log" >> "$S"
for d in run_to_run gpu_to_gpu run_to_run gpu_to_gpu; do
  for sh in "--shape 16384x16384 --axis 1" "--shape 16384x16384 --axis 0" "--segments loguniform"; do
    timeout 60 $N run $sh --determinism $d --runs 50 >> "$R/shapes-modes.log" 2>&1; echo "$d $sh rc=$?" >> "$R/shapes-modes.log"
  done
done
grep -vE "^$" "$R/shapes-modes.log" | grep -E "GB/s|rc=|MISMATCH|sum" >> "$S"
tar -cf "$OUT/s5c1.tar" -C /tmp s5c1
cat "$S"
