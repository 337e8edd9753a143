#!/usr/bin/env bash
# Session 5, call 7: the final build: all shapes new/old/new, rows A/B, and
# the vendors, one sitting (issue 13's table).
set -u
R=/tmp/s5c7; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce; O=.gpu/old-reduce
$N info >> "$S" 2>&1
for b in new old new; do
  B=$N; [ $b = old ] && B=$O
  k=$(ls $R | grep -c "^shapes-$b-.*\.txt$") ; k=$((k+1))
  timeout 150 $B shapes --runs 50 --json "$R/shapes-$b-$k.json" > "$R/shapes-$b-$k.txt" 2>&1; echo "shapes $b $k rc=$?" >> "$S"
done
timeout 150 python3 cli/baselines/shapes_vendor.py 50 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$?" >> "$S"
paste <(grep -E "axis|segments" "$R/shapes-new-1.txt" | awk '{print $1,$2,$3,$(NF-1), $NF}') <(grep -E "axis|segments" "$R/shapes-old-1.txt" | awk '{print $(NF-1)}') <(grep -E "axis|segments" "$R/shapes-new-2.txt" | awk '{print $(NF-1), $NF}') >> "$S"
cat "$R/vendor.jsonl" | grep -v scatter_add >> "$S"
tar -cf "$OUT/s5c7.tar" -C /tmp s5c7
cat "$S"
