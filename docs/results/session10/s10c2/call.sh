#!/usr/bin/env bash
# Session 10, call 2 (main 6e8f97a, its bundle):
# - the whole suite with REDUCTION_REQUIRE_GPU=1;
# - sums of 512 MiB and 1 GiB: ours (f32 and bf16 at 2^27 and 2^28, sum and
#   dot, result to host and device) between two runs of the vendors' (torch;
#   CuPy with CUB for f32), queued timing, medians of 100: is 4.4 TB/s on
#   512 MiB within reach of any reduction on this machine?
set -u
R=/tmp/s10c2; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
timeout 150 python3 cli/baselines/ops_vendor.py 2^27,2^28 100 --timing queued > "$R/vendor1.jsonl" 2> "$R/vendor1.err"; echo "vendor 1 rc=$? (${SECONDS}s)" >> "$S"
timeout 200 $N ops --n 2^27,2^28 --op sum,dot --type f32,bf16 --runs 100 --timing queued --result host,device --json "$R/ops.json" > "$R/ops.log" 2>&1; echo "ops rc=$? (${SECONDS}s)" >> "$S"
timeout 150 python3 cli/baselines/ops_vendor.py 2^27,2^28 100 --timing queued > "$R/vendor2.jsonl" 2> "$R/vendor2.err"; echo "vendor 2 rc=$? (${SECONDS}s)" >> "$S"
timeout 330 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$? (${SECONDS}s)" >> "$S"
grep -E "^test result" "$R/suite.log" | awk '{p+=$4; f+=$6} END {print "suite tests: " p " passed, " f " failed"}' >> "$S"
grep -E "FAILED|panicked|SKIPPED" "$R/suite.log" | head -5 >> "$S"
grep -E "^(sum|dot) " "$R/ops.log" >> "$S"
cat "$R/vendor1.jsonl" "$R/vendor2.jsonl" | grep -E '"(sum|dot)"' | grep -v '"f64"' | cut -c1-160 >> "$S"
tar -cf "$OUT/s10c2.tar" -C /tmp s10c2
cat "$S"
