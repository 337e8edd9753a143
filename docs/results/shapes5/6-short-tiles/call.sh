#!/usr/bin/env bash
# Session 6, call 6: tile sizes for short rows (rows_short: a block reads its
# eight warp tiles as one stretch) and for 256 KiB rows, twice each.
set -u
R=/tmp/s6c6; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
for round in 1 2; do
  for c in 16777216x16 67108864x4 8388608x32 4096x65536; do
    for t in 16 32 64 128 256; do
      echo "== $round $c $t" >> "$R/tiles.log"
      timeout 30 $N run --shape $c --axis 1 --tile $t --runs 50 >> "$R/tiles.log" 2>&1
    done
  done
done
grep -E "^== |axis 1" "$R/tiles.log" | paste - - | awk '{print $2, $3, $4, $(NF-1), $NF}' >> "$S"
tar -cf "$OUT/s6c6.tar" -C /tmp s6c6
cat "$S"
