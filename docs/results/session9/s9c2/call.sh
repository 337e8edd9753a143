#!/usr/bin/env bash
# Session 9, call 2 (main + arg-min/max at 512 threads below 2^25 + short
# single-pass grids in whole rounds, `plan::grid_in_whole_rounds`):
# - the whole GPU suite (REDUCTION_REQUIRE_GPU=1);
# - old (s9c1's binary: block 512, grids as before) against new, alternating
#   twice, at 2^16..2^24, queued, result to host and device;
# - the operations' table beside torch and CuPy (vendors before and after).
set -u
R=/tmp/s9c2; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/reduce-s9c1
$N info >> "$S" 2>&1
bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |^test result|FAILED|panicked" "$R/suite.log" | grep -v "^test result: ok" >> "$S"
grep -E "^test result" "$R/suite.log" | awk '{p+=$4; f+=$6} END {print "suite tests: " p " passed, " f " failed"}' >> "$S"
Q="--n 2^16,2^20,2^22,2^24 --op sum,argmax,dot,norm --type f32,bf16 --runs 200 --timing queued --result host,device"
for round in 1 2; do
  for v in old new; do
    b=$N; [ $v = old ] && b=$O
    echo "== $v $round" >> "$R/ab.log"
    timeout 90 $b ops $Q >> "$R/ab.log" 2>&1
  done
done
echo "a/b (${SECONDS}s)" >> "$S"
timeout 150 python3 cli/baselines/ops_vendor.py 2^22,2^28 100 --timing queued > "$R/vendor1.jsonl" 2> "$R/vendor1.err"; echo "vendor 1 rc=$? (${SECONDS}s)" >> "$S"
timeout 200 $N ops --n 2^22,2^28 --op sum,argmax,dot,norm --type f32,bf16 --runs 100 --timing queued --result host,device --json "$R/ops.json" > "$R/ops.log" 2>&1; echo "ops rc=$? (${SECONDS}s)" >> "$S"
timeout 150 python3 cli/baselines/ops_vendor.py 2^22,2^28 100 --timing queued > "$R/vendor2.jsonl" 2> "$R/vendor2.err"; echo "vendor 2 rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |^(sum|dot|norm|argmax) " "$R/ab.log" | awk '{if ($1=="==") print; else printf "%-7s %-5s %9s %5s %5s %7s %-6s %s\n",$1,$2,$3,$4,$5,$6,$9,$10}' >> "$S"
grep -E "^(sum|dot|norm|argmax) " "$R/ops.log" | cut -c1-100 >> "$S"
cat "$R/vendor1.jsonl" "$R/vendor2.jsonl" | cut -c1-140 >> "$S"
tar -cf "$OUT/s9c2.tar" -C /tmp s9c2
cat "$S"
