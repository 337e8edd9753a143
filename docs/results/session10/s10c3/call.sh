#!/usr/bin/env bash
# Session 10, call 3: arg-min/max that scan a vector's lanes for the first
# best value and build one index (branch exp-arg-lanes, PTX n; registers
# f32 54 -> 38, bf16 62 -> 48, i32 52 -> 33), through --ptx and
# REDUCTION_TEST_PTX with main's bundle (s10c2):
# - the whole suite on n (REDUCTION_REQUIRE_GPU=1);
# - main (m) against n, default blocks, alternated twice, 2^16..2^28;
# - n at blocks 256 / 512 / 1024 at 2^21..2^28 (the default rule was fitted
#   to 54-62 registers);
# - torch and CuPy after.
set -u
R=/tmp/s10c3; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
REDUCTION_TEST_PTX=.gpu/n.ptx timeout 330 bash .gpu/run-tests.sh > "$R/suite-n.log" 2>&1; echo "suite n rc=$? (${SECONDS}s)" >> "$S"
grep -E "^test result" "$R/suite-n.log" | awk '{p+=$4; f+=$6} END {print "suite n tests: " p " passed, " f " failed"}' >> "$S"
grep -E "FAILED|panicked" "$R/suite-n.log" | head -5 >> "$S"
Q="--op argmax --type f32,bf16,i32 --runs 100 --timing queued --result device"
for round in 1 2; do
  for v in m n; do
    echo "== $v $round" >> "$R/ab.log"
    timeout 100 $N --ptx .gpu/$v.ptx ops --n 2^16,2^20,2^22,2^25,2^28 $Q >> "$R/ab.log" 2>&1 || echo "ab $v $round rc=$?" >> "$S"
  done
done
echo "a/b (${SECONDS}s)" >> "$S"
for b in 256 512 1024; do
  echo "== b$b" >> "$R/blocks.log"
  timeout 100 $N --ptx .gpu/n.ptx ops --n 2^21,2^22,2^25,2^28 --block $b $Q >> "$R/blocks.log" 2>&1 || echo "block $b rc=$?" >> "$S"
done
echo "blocks (${SECONDS}s)" >> "$S"
timeout 100 python3 cli/baselines/ops_vendor.py 2^22,2^28 100 --timing queued > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |^argmax " "$R/ab.log" | awk '{if ($1=="==") {tag=$2 $3} else print $1, $2, $3, tag, $6, $4}' | sort -k1,1 -k2,2 -k3,3n -k4,4 | awk '{k=$1" "$2" "$3; if (k!=pk) {printf "\n%-7s %-5s %9s", $1,$2,$3; pk=k} printf "  %s:%s(b%s)", $4,$5,$6}' >> "$S"
echo >> "$S"
grep -E "^== |^argmax " "$R/blocks.log" | awk '{if ($1=="==") {tag=$2} else print $1, $2, $3, tag, $6}' | sort -k1,1 -k2,2 -k3,3n -k4,4 | awk '{k=$1" "$2" "$3; if (k!=pk) {printf "\n%-7s %-5s %9s", $1,$2,$3; pk=k} printf "  %s:%s", $4,$5}' >> "$S"
echo >> "$S"
grep argmax "$R/vendor.jsonl" | cut -c1-140 >> "$S"
tar -cf "$OUT/s10c3.tar" -C /tmp s10c3
cat "$S"
