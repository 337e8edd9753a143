#!/usr/bin/env bash
# Session 8, call 2: speed, each variant through --ptx with one binary,
# alternating, twice. Operations (base vs c = exp-batch8) queued, the result
# to the host (mapped slot) and to a device buffer (--result device, as
# torch and CuPy leave theirs): argmax/dot f32 and sum bf16 at 2^22 and
# 2^28, sum f32 at 2^27 (the bytes of bf16 at 2^28); argmax 2^22 at blocks
# 256/512/1024. Short rows (base vs a vs d --tile 32 vs e); long rows (main
# vs base = rows-long-fold); the vendors' shapes before and after.
set -u
R=/tmp/s8c2; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
timeout 120 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor1.jsonl" 2> "$R/vendor1.err"; echo "vendor 1 rc=$? (${SECONDS}s)" >> "$S"
Q="--runs 100 --timing queued --result host,device"
for round in 1 2; do
  for v in base c; do
    echo "== $v $round" >> "$R/ops.log"
    timeout 90 $N --ptx .gpu/$v.ptx ops --n 2^22,2^28 --op argmax,dot --type f32 $Q >> "$R/ops.log" 2>&1
    timeout 60 $N --ptx .gpu/$v.ptx ops --n 2^22,2^28 --op sum --type bf16 $Q >> "$R/ops.log" 2>&1
    timeout 60 $N --ptx .gpu/$v.ptx ops --n 2^27 --op sum --type f32 $Q >> "$R/ops.log" 2>&1
  done
done
for v in base c; do
  for b in 256 512 1024; do
    echo "== $v block $b" >> "$R/ops.log"
    timeout 60 $N --ptx .gpu/$v.ptx ops --n 2^22 --op argmax --type f32 --block $b --runs 200 --timing queued --result host,device >> "$R/ops.log" 2>&1
  done
done
echo "ops (${SECONDS}s)" >> "$S"
for round in 1 2; do
  for c in 16777216x16 67108864x4 8388608x32 2097152x128; do
    for v in base a d e; do
      t=""; [ $v = d ] && t="--tile 32"
      echo "== $v $round $c" >> "$R/short.log"
      timeout 40 $N --ptx .gpu/$v.ptx run --shape $c --axis 1 $t --runs 50 >> "$R/short.log" 2>&1
    done
  done
  for c in 16384x16384 4096x65536 256x1048576; do
    for v in main base; do
      echo "== $v $round $c" >> "$R/long.log"
      timeout 40 $N --ptx .gpu/$v.ptx run --shape $c --axis 1 --runs 50 >> "$R/long.log" 2>&1
    done
  done
done
echo "shapes a/b (${SECONDS}s)" >> "$S"
timeout 120 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor2.jsonl" 2> "$R/vendor2.err"; echo "vendor 2 rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |argmax|dot|sum" "$R/ops.log" | grep -vE "^ *op" >> "$R/ops-short.txt"
cat "$R/ops-short.txt" >> "$S"
for f in short long; do grep -E "^== |axis 1" "$R/$f.log" | paste - - | awk '{print $2, $3, $4, $(NF-1), $NF}' >> "$S"; done
grep -hE "x16 axis 1|x4 axis 1|x32 axis 1|x128 axis 1|16384x16384 axis 1|4096x65536 axis 1|256x1048576 axis 1" "$R/vendor1.jsonl" "$R/vendor2.jsonl" >> "$S"
tar -cf "$OUT/s8c2.tar" -C /tmp s8c2
cat "$S"
