#!/usr/bin/env bash
# Session 10, call 5: the bundle of branch exp-arg-lanes as merged (the
# shortcut of call 4 for eight-lane vectors only: arg-min/max of f16 and
# bf16; every other operation and type maps its lanes and combines them
# pairwise, as before, through one generic `Lanes` impl):
# - main's PTX (m, --ptx) against the new build (embedded), argmax of bf16,
#   f16, f32 and i32 at 2^16..2^28, twice;
# - the whole suite with REDUCTION_REQUIRE_GPU=1.
set -u
R=/tmp/s10c5; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
Q="--n 2^16,2^20,2^22,2^25,2^28 --op argmax --type bf16,f16,f32,i32 --runs 100 --timing queued --result device"
for round in 1 2; do
  echo "== m $round" >> "$R/ab.log"
  timeout 60 $N --ptx .gpu/m.ptx ops $Q >> "$R/ab.log" 2>&1 || echo "ab m rc=$?" >> "$S"
  echo "== new $round" >> "$R/ab.log"
  timeout 60 $N ops $Q >> "$R/ab.log" 2>&1 || echo "ab new rc=$?" >> "$S"
done
echo "a/b (${SECONDS}s)" >> "$S"
timeout 240 bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$? (${SECONDS}s)" >> "$S"
grep -E "^test result" "$R/suite.log" | awk '{p+=$4; f+=$6} END {print "suite tests: " p " passed, " f " failed"}' >> "$S"
grep -E "FAILED|panicked" "$R/suite.log" | head -5 >> "$S"
grep -E "^== |^argmax " "$R/ab.log" | awk '{if ($1=="==") {tag=$2 $3} else print $1, $2, $3, tag, $6, $4}' | sort -k1,1 -k2,2 -k3,3n -k4,4 | awk '{k=$1" "$2" "$3; if (k!=pk) {printf "\n%-7s %-5s %9s", $1,$2,$3; pk=k} printf "  %s:%s(b%s)", $4,$5,$6}' >> "$S"
echo >> "$S"
tar -cf "$OUT/s10c5.tar" -C /tmp s10c5
cat "$S"
