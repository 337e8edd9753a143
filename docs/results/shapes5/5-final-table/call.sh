#!/usr/bin/env bash
# Session 6, call 5: the final code. Issue 13's table (`reduce shapes` twice,
# then the vendors, one sitting); the whole GPU suite (REDUCTION_REQUIRE_GPU=1);
# issue 12's operations and issue 11's user call (queued), the 32 MiB probe.
set -u
R=/tmp/s6c5; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
for round in 1 2; do
  timeout 120 $N shapes --runs 50 --json "$R/shapes-$round.json" > "$R/shapes-$round.txt" 2>&1; echo "shapes $round rc=$? (${SECONDS}s)" >> "$S"
done
timeout 120 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$? (${SECONDS}s)" >> "$S"
timeout 220 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$? (${SECONDS}s)" >> "$S"
grep -E "^test result|FAILED|SKIPPED" "$R/suite.log" | sort | uniq -c >> "$S"
timeout 60 $N ops --n 2^22,2^28 --op sum,argmax,dot,norm --type f32,bf16 --runs 100 --timing queued > "$R/ops.txt" 2>&1; echo "ops rc=$? (${SECONDS}s)" >> "$S"
timeout 30 $N latency --timing queued > "$R/latency.txt" 2>&1; echo "latency rc=$? (${SECONDS}s)" >> "$S"
(nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/probe cli/baselines/latency_probe.cu > "$R/probe.log" 2>&1 && timeout 40 /tmp/probe >> "$R/probe.log" 2>&1); echo "probe rc=$? (${SECONDS}s)" >> "$S"
paste <(grep -E "axis|segments" "$R/shapes-1.txt" | awk '{print $1,$2,$3,$(NF-1)}') <(grep -E "axis|segments" "$R/shapes-2.txt" | awk '{print $(NF-1), $NF}') >> "$S"
grep -v scatter_add "$R/vendor.jsonl" >> "$S"
grep queued "$R/ops.txt" | awk '{print $1,$2,$3,$4,$5,$6,$8}' >> "$S"
tail -6 "$R/latency.txt" >> "$S"
grep -E "2\^22|2\^23|CUB|empty" "$R/probe.log" >> "$S"
tar -cf "$OUT/s6c5.tar" -C /tmp s6c5
cat "$S"
