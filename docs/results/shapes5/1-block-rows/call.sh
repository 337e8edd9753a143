#!/usr/bin/env bash
# Session 6, call 1: the row kernels read a block's stretch together
# (rows_short: 16 KiB block rounds; rows_long: a tile per block, 256 threads).
# GPU tests (determinism, shapes), old/new alternating twice on the row shapes,
# tile sizes on the long rows, the vendors; the 32 MiB floor probe.
set -u
R=/tmp/s6c1; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/old-reduce
$N info >> "$S" 2>&1
export REDUCTION_REQUIRE_GPU=1
for t in determinism shapes; do
  B=$(ls .gpu/bin/$t-*)
  timeout 150 $B > "$R/$t.log" 2>&1; echo "$t rc=$? (${SECONDS}s)" >> "$S"
  grep -E "^test result|FAILED" "$R/$t.log" >> "$S"
done
for round in 1 2; do
  for c in 16384x16384 4096x65536 256x1048576 16777216x16; do
    for b in old new; do
      B=$N; [ $b = old ] && B=$O
      echo "== $b $round $c" >> "$R/ab.log"
      timeout 40 $B run --shape $c --axis 1 --runs 50 >> "$R/ab.log" 2>&1
    done
  done
done
echo "ab done (${SECONDS}s)" >> "$S"
for c in 16384x16384 4096x65536 256x1048576; do
  for t in 16 32 64 128 256; do
    echo "== tile $c $t" >> "$R/tiles.log"
    timeout 40 $N run --shape $c --axis 1 --tile $t --runs 50 >> "$R/tiles.log" 2>&1
  done
done
echo "tiles done (${SECONDS}s)" >> "$S"
timeout 120 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$? (${SECONDS}s)" >> "$S"
(nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/probe cli/baselines/latency_probe.cu > "$R/probe.log" 2>&1 && timeout 60 /tmp/probe >> "$R/probe.log" 2>&1); echo "probe rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |axis 1" "$R/ab.log" | paste - - | awk '{print $2, $3, $4, $(NF-1), $NF}' >> "$S"
grep -E "^== |axis 1" "$R/tiles.log" | paste - - | awk '{print $3, $4, $(NF-1), $NF}' >> "$S"
grep "axis 1" "$R/vendor.jsonl" >> "$S"
grep -E "2\^22|2\^23|CUB|empty" "$R/probe.log" >> "$S"
tar -cf "$OUT/s6c1.tar" -C /tmp s6c1
cat "$S"
