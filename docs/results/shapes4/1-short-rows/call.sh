#!/usr/bin/env bash
# Session 5, call 3: short rows read contiguously (issue 13's rows of 16):
# GPU suite, memcheck on rows of 16, A/B against the previous build on rows
# of 4..128 f32, then all shapes and the vendors in one sitting.
set -u
R=/tmp/s5c3; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/old-reduce
$N info >> "$S" 2>&1
timeout 300 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$?" >> "$S"
grep -E "^test result|FAILED|failed|^== " "$R/suite.log" >> "$S"
grep -A3 "^---- " "$R/suite.log" >> "$S"
SH=$(ls .gpu/bin/shapes-*)
for f in ops::sum_ arg::ties; do
  REDUCTION_REQUIRE_GPU=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $SH $f > "$R/memcheck-${f%%::*}.log" 2>&1; echo "memcheck shapes $f rc=$?" >> "$S"
  grep -E "ERROR SUMMARY|test result" "$R/memcheck-${f%%::*}.log" >> "$S"
done
for round in 1 2; do
  for c in 4 8 16 32 64 128; do
    rows=$((268435456 / c))
    for b in old new; do
      B=$N; [ $b = old ] && B=$O
      echo "== $b ${rows}x$c" >> "$R/ab.log"
      timeout 60 $B run --shape ${rows}x$c --axis 1 --runs 50 >> "$R/ab.log" 2>&1
    done
  done
done
grep -E "^== |axis 1" "$R/ab.log" | paste - - | awk '{print $2, $3, $(NF-1), $NF}' >> "$S"
timeout 200 $N shapes --runs 50 --json "$R/shapes.json" > "$R/shapes.txt" 2>&1; echo "shapes rc=$?" >> "$S"
timeout 200 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$?" >> "$S"
grep -E "axis|segments" "$R/shapes.txt" >> "$S"
cat "$R/vendor.jsonl" >> "$S"
tar -cf "$OUT/s5c3.tar" -C /tmp s5c3
cat "$S"
