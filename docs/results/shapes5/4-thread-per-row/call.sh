#!/usr/bin/env bash
# Session 6, call 4: rows_short takes rows of one to four vectors a thread a
# row (no shuffles, one store per 32 rows); against call 1's binary (old),
# twice, on rows of 4..128 f32 and the long rows, with the vendors; the
# whole GPU suite (REDUCTION_REQUIRE_GPU=1) and memcheck on the shaped kernels.
set -u
R=/tmp/s6c4; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/old-reduce
$N info >> "$S" 2>&1
for round in 1 2; do
  for c in 16777216x16 67108864x4 33554432x8 8388608x32 4194304x64 2097152x128 16384x16384 4096x65536; do
    for b in old new; do
      B=$N; [ $b = old ] && B=$O
      echo "== $b $round $c" >> "$R/ab.log"
      timeout 40 $B run --shape $c --axis 1 --runs 50 >> "$R/ab.log" 2>&1
    done
  done
done
echo "ab done (${SECONDS}s)" >> "$S"
timeout 120 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$? (${SECONDS}s)" >> "$S"
timeout 300 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |^test result|FAILED|SKIPPED" "$R/suite.log" >> "$S"
B=$(ls .gpu/bin/shapes-*)
timeout 60 compute-sanitizer --tool memcheck $B ops::sum_f32 > "$R/memcheck-shapes.log" 2>&1; echo "memcheck shapes rc=$? (${SECONDS}s)" >> "$S"
tail -1 "$R/memcheck-shapes.log" >> "$S"
grep -E "^== |axis 1" "$R/ab.log" | paste - - | awk '{print $2, $3, $4, $(NF-1), $NF}' >> "$S"
grep "axis 1" "$R/vendor.jsonl" >> "$S"
tar -cf "$OUT/s6c4.tar" -C /tmp s6c4
cat "$S"
