#!/usr/bin/env bash
# Session 9, call 3: arg-min/max at 256 threads against 512 (s9c1's binary:
# the 512 default, grids as before) at 2^16..2^24, alternating twice,
# queued, result on the device.
set -u
R=/tmp/s9c3; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
O=.gpu/reduce-s9c1
$O info >> "$S" 2>&1
Q="--n 2^16,2^18,2^20,2^21,2^22,2^23,2^24 --op argmax,argmin --type f32,bf16,i32,f64 --runs 200 --timing queued --result device"
for round in 1 2; do
  for b in 256 512; do
    echo "== $b $round" >> "$R/arg.log"
    timeout 120 $O ops $Q --block $b >> "$R/arg.log" 2>&1
  done
done
echo "arg (${SECONDS}s)" >> "$S"
grep -E "^== |^(argmax|argmin) " "$R/arg.log" | awk '{if ($1=="==") {tag=$2"/"$3} else print $1, $2, $3, tag, $6}' | sort -k1,1 -k2,2 -k3,3n -k4,4 | awk '{k=$1" "$2" "$3; if (k!=pk) {printf "\n%-7s %-5s %9s", $1,$2,$3; pk=k} printf "  %s:%s", $4,$5}' >> "$S"
echo >> "$S"
tar -cf "$OUT/s9c3.tar" -C /tmp s9c3
cat "$S"
