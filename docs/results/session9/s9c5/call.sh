#!/usr/bin/env bash
# Session 9, call 5: f = every __threadfence / __threadfence_system of the
# kernels as fence.acq_rel.gpu / fence.acq_rel.sys (SASS MEMBAR.ALL, not
# MEMBAR.SC), branch exp-fence, through --ptx / REDUCTION_TEST_PTX with the
# s9c4 bundle (final main):
# - the whole suite on f (REDUCTION_REQUIRE_GPU=1);
# - main against f at 2^10..2^22, alternating twice, queued, host and device.
set -u
R=/tmp/s9c5; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
Q="--n 2^10,2^16,2^20,2^22 --op sum,argmax,dot,norm --type f32,bf16 --runs 200 --timing queued --result host,device"
for round in 1 2; do
  for v in main f; do
    p=""; [ $v = f ] && p="--ptx .gpu/f.ptx"
    echo "== $v $round" >> "$R/ab.log"
    timeout 90 $N $p ops $Q >> "$R/ab.log" 2>&1
  done
done
echo "a/b (${SECONDS}s)" >> "$S"
REDUCTION_TEST_PTX=.gpu/f.ptx timeout 400 bash .gpu/run-tests.sh > "$R/suite-f.log" 2>&1; echo "suite f rc=$? (${SECONDS}s)" >> "$S"
grep -E "^test result" "$R/suite-f.log" | awk '{p+=$4; f+=$6} END {print "suite f tests: " p " passed, " f " failed"}' >> "$S"
grep -E "FAILED|panicked" "$R/suite-f.log" | head -5 >> "$S"
grep -E "^== |^(sum|dot|norm|argmax) " "$R/ab.log" | awk '{if ($1=="==") {tag=$2 $3} else print $1, $2, $3, $10, tag, $6}' | sort -k1,1 -k2,2 -k3,3n -k4,4 -k5,5 | awk '{k=$1" "$2" "$3" "$4; if (k!=pk) {printf "\n%-7s %-5s %9s %-6s", $1,$2,$3,$4; pk=k} printf "  %s:%s", $5,$6}' >> "$S"
echo >> "$S"
tar -cf "$OUT/s9c5.tar" -C /tmp s9c5
cat "$S"
