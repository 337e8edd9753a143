#!/usr/bin/env bash
# Session 6, call 7: rows_short a tile per block (16 KiB by default, was
# eight warp tiles = 128 KiB a block): old (61d425b) / new twice on the
# short rows, tiles for the new one, the vendors; shapes and determinism
# tests (REDUCTION_REQUIRE_GPU=1), memcheck; `reduce shapes` once.
set -u
R=/tmp/s6c7; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/old-reduce
$N info >> "$S" 2>&1
export REDUCTION_REQUIRE_GPU=1
for t in shapes determinism; do
  B=$(ls .gpu/bin/$t-*)
  timeout 150 $B > "$R/$t.log" 2>&1; echo "$t rc=$? (${SECONDS}s)" >> "$S"
  grep -E "^test result|FAILED" "$R/$t.log" >> "$S"
done
B=$(ls .gpu/bin/shapes-*)
timeout 60 compute-sanitizer --tool memcheck $B ops::sum_f32 > "$R/memcheck-shapes.log" 2>&1; echo "memcheck shapes rc=$? (${SECONDS}s)" >> "$S"
tail -1 "$R/memcheck-shapes.log" >> "$S"
for round in 1 2; do
  for c in 16777216x16 67108864x4 33554432x8 8388608x32 4194304x64 2097152x128; do
    for b in old new; do
      B=$N; [ $b = old ] && B=$O
      echo "== $b $round $c" >> "$R/ab.log"
      timeout 40 $B run --shape $c --axis 1 --runs 50 >> "$R/ab.log" 2>&1
    done
  done
done
for t in 16 32 64; do
  echo "== tile 16777216x16 $t" >> "$R/tiles.log"
  timeout 30 $N run --shape 16777216x16 --axis 1 --tile $t --runs 50 >> "$R/tiles.log" 2>&1
done
timeout 120 $N shapes --runs 50 --json "$R/shapes.json" > "$R/shapes.txt" 2>&1; echo "shapes rc=$? (${SECONDS}s)" >> "$S"
timeout 120 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |axis 1" "$R/ab.log" | paste - - | awk '{print $2, $3, $4, $(NF-1), $NF}' >> "$S"
grep -E "^== |axis 1" "$R/tiles.log" | paste - - | awk '{print $3, $4, $(NF-1), $NF}' >> "$S"
grep -E "axis|segments" "$R/shapes.txt" | awk '{print $1,$2,$3,$(NF-1),$NF}' >> "$S"
grep -v scatter_add "$R/vendor.jsonl" >> "$S"
tar -cf "$OUT/s6c7.tar" -C /tmp s6c7
cat "$S"
