#!/usr/bin/env bash
# Session 10, call 1: the 16-byte loads with a 256-byte L2 prefetch size
# (p: ld.global.nc.L2::256B, SASS LDG.E.LTC256B.128.CONSTANT) and with it
# no L1 allocation (pn: .L1::no_allocate.L2::256B), made from main's PTX
# by sed here, through --ptx; main (6e8f97a) against them, alternated twice:
# the operations at 2^22 and 2^28 (device result, queued), rows of 16 and
# 16384x16384 along axis 1, 16384x16384 along axis 0; CuPy's rows after.
set -u
R=/tmp/s10c1; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
V='s/^\.version 7\.0$/.version 7.4/; s/^\.target sm_75$/.target sm_80/'
sed -E "s/ld\.global\.nc\.v(2|4)\./ld.global.nc.L2::256B.v\1./; $V" .gpu/main.ptx > .gpu/p.ptx
sed -E "s/ld\.global\.nc\.v(2|4)\./ld.global.nc.L1::no_allocate.L2::256B.v\1./; $V" .gpu/main.ptx > .gpu/pn.ptx
Q="--n 2^22,2^28 --op sum,dot,argmax --type f32,bf16 --runs 100 --timing queued --result device"
for round in 1 2; do
  for v in main p pn; do
    p="--ptx .gpu/$v.ptx"
    echo "== $v $round" >> "$R/ab.log"
    timeout 100 $N $p ops $Q >> "$R/ab.log" 2>&1 || echo "ops $v $round rc=$?" >> "$S"
    for sh in "16777216x16 --axis 1" "16384x16384 --axis 1" "16384x16384 --axis 0"; do
      timeout 60 $N $p run --shape $sh --runs 100 >> "$R/shape-$v.log" 2>&1 || echo "shape $v $sh rc=$?" >> "$S"
    done
  done
  echo "round $round (${SECONDS}s)" >> "$S"
done
timeout 100 python3 cli/baselines/shapes_vendor.py 100 16777216x16,16384x16384 > "$R/vendor.jsonl" 2> "$R/vendor.err"; echo "vendor rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |^(sum|dot|norm|argmax) " "$R/ab.log" | awk '{if ($1=="==") {tag=$2 $3} else print $1, $2, $3, tag, $6, $7}' | sort -k1,1 -k2,2 -k3,3n -k4,4 | awk '{k=$1" "$2" "$3; if (k!=pk) {printf "\n%-7s %-5s %9s", $1,$2,$3; pk=k} printf "  %s:%s", $4,$5}' >> "$S"
echo >> "$S"
for v in main p pn; do grep -E "axis" "$R/shape-$v.log" | awk -v v=$v '{print v, $0}' | cut -c1-150 >> "$S"; done
grep -E "axis" "$R/vendor.jsonl" >> "$S"
tar -cf "$OUT/s10c1.tar" -C /tmp s10c1
cat "$S"
