#!/usr/bin/env bash
# Session 9, call 1 (main a881f81 + arg-min/max default block 512 below
# 2^25 + `reduce ops --max-grid` and a grid column):
# - the operations tests (Poisoned device results; the new default block);
# - grids in whole rounds: at 2^22 and 2^24 the default grid against the
#   grid with which every thread's vectors come in whole rounds of four
#   (--max-grid: f32 sum/dot/norm 1024; bf16 sum 512 at 2^22, 1024 at 2^24;
#   bf16 dot 512 / 683; argmax f32 at 512 threads 256), and dot f32 at 512;
#   alternating, twice, queued, result to host and device;
# - arg-min/max of every type at 2^22: --block 256 against the new default;
# - rows of 16 (axis 1): main and e (streaming stores, exp-short-cs) against
#   CuPy, alternating three times.
set -u
R=/tmp/s9c1; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
B=$(ls .gpu/bin/operations-*)
REDUCTION_REQUIRE_GPU=1 timeout 150 $B > "$R/operations.log" 2>&1; echo "operations rc=$? (${SECONDS}s)" >> "$S"
grep -E "^test result|FAILED" "$R/operations.log" | head -5 >> "$S"
timeout 30 $N ops --n 2^22 --op argmax,dot --type f32,bf16 --runs 20 --timing queued --result device >> "$R/operations.log" 2>&1; echo "ops device rc=$? (${SECONDS}s)" >> "$S"
Q="--runs 200 --timing queued --result host,device"
G=$R/grid.log
for round in 1 2; do
  for n in 2^22 2^24; do
    echo "== default $round $n" >> "$G"
    timeout 60 $N ops --n $n --op sum,dot,norm,argmax --type f32 $Q >> "$G" 2>&1
    timeout 60 $N ops --n $n --op sum,dot --type bf16 $Q >> "$G" 2>&1
    echo "== rounds $round $n" >> "$G"
    timeout 60 $N ops --n $n --op sum,dot,norm --type f32 --max-grid 1024 $Q >> "$G" 2>&1
    timeout 60 $N ops --n $n --op argmax --type f32 --max-grid 256 $Q >> "$G" 2>&1
    if [ $n = 2^22 ]; then bs=512; bd=512; else bs=1024; bd=683; fi
    timeout 60 $N ops --n $n --op sum --type bf16 --max-grid $bs $Q >> "$G" 2>&1
    timeout 60 $N ops --n $n --op dot --type bf16 --max-grid $bd $Q >> "$G" 2>&1
    echo "== half $round $n" >> "$G"
    timeout 60 $N ops --n $n --op dot --type f32 --max-grid 512 $Q >> "$G" 2>&1
  done
done
echo "grid (${SECONDS}s)" >> "$S"
A=$R/arg.log
for round in 1 2; do
  for b in 256 default; do
    echo "== block $b $round" >> "$A"
    bb=""; [ $b = 256 ] && bb="--block 256"
    timeout 90 $N ops --n 2^22 --op argmax,argmin --type i32,u32,i64,u64,f32,f64,f16,bf16 $bb --runs 200 --timing queued --result host,device >> "$A" 2>&1
  done
done
echo "arg blocks (${SECONDS}s)" >> "$S"
for round in 1 2 3; do
  for v in main e; do
    p=""; [ $v = e ] && p="--ptx .gpu/e.ptx"
    echo "== $v $round" >> "$R/short.log"
    timeout 60 $N $p run --shape 16777216x16 --axis 1 --runs 100 >> "$R/short.log" 2>&1
  done
  timeout 90 python3 cli/baselines/shapes_vendor.py 100 16777216x16 >> "$R/vendor-short.jsonl" 2>> "$R/vendor.err"
done
echo "short rows (${SECONDS}s)" >> "$S"
grep -E "^== |^(sum|dot|norm|argmax|argmin) " "$G" | cut -c1-96 >> "$S"
grep -E "^== |^(argmax|argmin) " "$A" | cut -c1-96 >> "$S"
grep -E "^== |axis 1" "$R/short.log" | paste - - | awk '{print $2, $3, $(NF-2), $(NF-1), $NF}' >> "$S"
grep "axis 1" "$R/vendor-short.jsonl" >> "$S"
tar -cf "$OUT/s9c1.tar" -C /tmp s9c1
cat "$S"
