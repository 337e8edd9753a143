#!/usr/bin/env bash
# Session 5, call 6: rows_short and rows_long entries: all shapes,
# old (short rows inside the segments kernel) and new alternating twice, rows of 4..128,
# and the vendors, one sitting.
set -u
R=/tmp/s5c6; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/old-reduce
$N info >> "$S" 2>&1
for round in 1 2; do
  for b in old new; do
    B=$N; [ $b = old ] && B=$O
    timeout 150 $B shapes --runs 50 --json "$R/shapes-$b-$round.json" > "$R/shapes-$b-$round.txt" 2>&1; echo "shapes $b $round rc=$?" >> "$S"
  done
done
for c in 4 16 64 128 16384 65536; do
  rows=$((268435456 / c))
  for b in old new; do
    B=$N; [ $b = old ] && B=$O
    echo "== $b ${rows}x$c" >> "$R/ab.log"
    timeout 60 $B run --shape ${rows}x$c --axis 1 --runs 50 >> "$R/ab.log" 2>&1
  done
done
timeout 150 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$?" >> "$S"
paste <(grep -E "axis|segments" "$R/shapes-old-1.txt" | awk '{print $1,$2,$3,$(NF-1)}') <(grep -E "axis|segments" "$R/shapes-new-1.txt" | awk '{print $(NF-1), $NF}') <(grep -E "axis|segments" "$R/shapes-old-2.txt" | awk '{print $(NF-1)}') <(grep -E "axis|segments" "$R/shapes-new-2.txt" | awk '{print $(NF-1), $NF}') >> "$S"
grep -E "^== |axis 1" "$R/ab.log" | paste - - | awk '{print $2, $3, $(NF-1), $NF}' >> "$S"
cat "$R/vendor.jsonl" | grep -v scatter_add >> "$S"
tar -cf "$OUT/s5c6.tar" -C /tmp s5c6
cat "$S"
