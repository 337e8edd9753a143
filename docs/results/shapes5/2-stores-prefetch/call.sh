#!/usr/bin/env bash
# Session 6, call 2: rows_long without divisions before its loads, rows_short
# with one coalesced store per 32 rows; against call 1's binary (old), twice;
# the vendors; GPU tests and memcheck. Then a PTX variant (pf.ptx: the
# single-pass loop asks for the next round's lines into L2) against the
# embedded one, twice, on the operations at 2^22 and 2^28; the user-call latency.
set -u
R=/tmp/s6c2; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/old-reduce
$N info >> "$S" 2>&1
export REDUCTION_REQUIRE_GPU=1
for t in shapes determinism; do
  B=$(ls .gpu/bin/$t-*)
  timeout 150 $B > "$R/$t.log" 2>&1; echo "$t rc=$? (${SECONDS}s)" >> "$S"
  grep -E "^test result|FAILED" "$R/$t.log" >> "$S"
done
for round in 1 2; do
  for c in 16384x16384 4096x65536 256x1048576 16777216x16 67108864x4 33554432x8 8388608x32; do
    for b in old new; do
      B=$N; [ $b = old ] && B=$O
      echo "== $b $round $c" >> "$R/ab.log"
      timeout 40 $B run --shape $c --axis 1 --runs 50 >> "$R/ab.log" 2>&1
    done
  done
done
echo "ab done (${SECONDS}s)" >> "$S"
timeout 120 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$? (${SECONDS}s)" >> "$S"
for round in 1 2; do
  for v in embedded pf; do
    P=""; [ $v = pf ] && P="--ptx .gpu/pf.ptx"
    timeout 90 $N $P ops --n 2^22,2^28 --op sum,argmax,dot,norm --type f32,bf16 --runs 100 --timing queued > "$R/ops-$v-$round.txt" 2>&1
    echo "ops $v $round rc=$? (${SECONDS}s)" >> "$S"
  done
done
timeout 60 $N latency --timing queued > "$R/latency.txt" 2>&1; echo "latency rc=$? (${SECONDS}s)" >> "$S"
B=$(ls .gpu/bin/shapes-*)
timeout 100 compute-sanitizer --tool memcheck $B ops::sum_f32 > "$R/memcheck-shapes.log" 2>&1; echo "memcheck shapes rc=$? (${SECONDS}s)" >> "$S"
tail -3 "$R/memcheck-shapes.log" >> "$S"
grep -E "^== |axis 1" "$R/ab.log" | paste - - | awk '{print $2, $3, $4, $(NF-1), $NF}' >> "$S"
grep "axis 1" "$R/vendor.jsonl" >> "$S"
paste <(grep -E "queued" "$R/ops-embedded-1.txt" | awk '{print $1, $2, $3, $5}') <(grep -E "queued" "$R/ops-pf-1.txt" | awk '{print $5}') <(grep -E "queued" "$R/ops-embedded-2.txt" | awk '{print $5}') <(grep -E "queued" "$R/ops-pf-2.txt" | awk '{print $5, $8}') >> "$S"
tail -8 "$R/latency.txt" >> "$S"
tar -cf "$OUT/s6c2.tar" -C /tmp s6c2
cat "$S"
