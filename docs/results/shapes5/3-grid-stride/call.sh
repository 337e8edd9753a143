#!/usr/bin/env bash
# Session 6, call 3: rows_short reads 16 KiB rounds grid-stride (one moving
# window); against call 1's binary (old), twice, with the vendors; the whole
# GPU suite (REDUCTION_REQUIRE_GPU=1) and memcheck on the shaped kernels;
# the block-size fallback on a PTX whose argmax bf16 b1024 needs 67
# registers (pf.ptx, which also asks for the next round's lines into L2:
# f32 operations against the embedded PTX, twice).
set -u
R=/tmp/s6c3; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/old-reduce
$N info >> "$S" 2>&1
for round in 1 2; do
  for c in 16777216x16 67108864x4 33554432x8 8388608x32 4194304x64 16384x16384 4096x65536; do
    for b in old new; do
      B=$N; [ $b = old ] && B=$O
      echo "== $b $round $c" >> "$R/ab.log"
      timeout 40 $B run --shape $c --axis 1 --runs 50 >> "$R/ab.log" 2>&1
    done
  done
done
echo "ab done (${SECONDS}s)" >> "$S"
timeout 120 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$? (${SECONDS}s)" >> "$S"
timeout 40 $N --ptx .gpu/pf.ptx ops --n 2^28 --op argmax --type bf16 --runs 20 > "$R/fallback.txt" 2>&1; echo "fallback (default block) rc=$?" >> "$S"
timeout 40 $N --ptx .gpu/pf.ptx ops --n 2^28 --op argmax --type bf16 --block 1024 --runs 20 >> "$R/fallback.txt" 2>&1; echo "fallback (--block 1024) rc=$? (want 1 or 2, one line)" >> "$S"
for round in 1 2; do
  for v in embedded pf; do
    P=""; [ $v = pf ] && P="--ptx .gpu/pf.ptx"
    timeout 60 $N $P ops --n 2^22,2^28 --op sum,argmax,dot,norm --type f32 --runs 100 --timing queued > "$R/ops-$v-$round.txt" 2>&1
    echo "ops $v $round rc=$? (${SECONDS}s)" >> "$S"
  done
done
timeout 280 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |^test result|FAILED|SKIPPED" "$R/suite.log" >> "$S"
B=$(ls .gpu/bin/shapes-*)
timeout 60 compute-sanitizer --tool memcheck $B ops::sum_f32 > "$R/memcheck-shapes.log" 2>&1; echo "memcheck shapes rc=$? (${SECONDS}s)" >> "$S"
tail -1 "$R/memcheck-shapes.log" >> "$S"
grep -E "^== |axis 1" "$R/ab.log" | paste - - | awk '{print $2, $3, $4, $(NF-1), $NF}' >> "$S"
grep "axis 1" "$R/vendor.jsonl" >> "$S"
grep -E "argmax|error" "$R/fallback.txt" >> "$S"
paste <(grep -E "queued" "$R/ops-embedded-1.txt" | awk '{print $1, $2, $3, $5}') <(grep -E "queued" "$R/ops-pf-1.txt" | awk '{print $5}') <(grep -E "queued" "$R/ops-embedded-2.txt" | awk '{print $5}') <(grep -E "queued" "$R/ops-pf-2.txt" | awk '{print $5, $8}') >> "$S"
tar -cf "$OUT/s6c3.tar" -C /tmp s6c3
cat "$S"
