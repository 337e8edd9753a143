#!/usr/bin/env bash
# Session 8, call 3: the operations' table for docs/operations.md, one
# sitting beside torch and CuPy: the bundle (rows-long-fold, kernels as
# main), queued, results to the host and to a device buffer; arg-max at
# 2^22 also at 512 and 1024 threads; the vendors before and after.
set -u
R=/tmp/s8c3; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
timeout 150 python3 cli/baselines/ops_vendor.py 2^22,2^28 100 --timing queued > "$R/vendor1.jsonl" 2> "$R/vendor1.err"; echo "vendor 1 rc=$? (${SECONDS}s)" >> "$S"
timeout 240 $N ops --n 2^22,2^28 --op sum,argmax,dot,norm --type f32,bf16 --runs 100 --timing queued --result host,device --json "$R/ops.json" > "$R/ops.log" 2>&1; echo "ops rc=$? (${SECONDS}s)" >> "$S"
for b in 512 1024; do
  timeout 60 $N ops --n 2^22 --op argmax --type f32,bf16 --block $b --runs 100 --timing queued --result host,device >> "$R/blocks.log" 2>&1
done
echo "blocks (${SECONDS}s)" >> "$S"
timeout 150 python3 cli/baselines/ops_vendor.py 2^22,2^28 100 --timing queued > "$R/vendor2.jsonl" 2> "$R/vendor2.err"; echo "vendor 2 rc=$? (${SECONDS}s)" >> "$S"
grep -vE "^ *operation|^NVIDIA|^timing" "$R/ops.log" "$R/blocks.log" | cut -c1-100 >> "$S"
cat "$R/vendor1.jsonl" "$R/vendor2.jsonl" | cut -c1-160 >> "$S"
tar -cf "$OUT/s8c3.tar" -C /tmp s8c3
cat "$S"
