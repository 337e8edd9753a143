#!/usr/bin/env bash
# Session 8, call 1 (prepared without a GPU; as s7c1, now on main 242c4f2 + rows-long-fold ad76de1)
# (rows_long through block_reduce + one combine_pieces) -- the whole GPU
# suite, memcheck on the shaped trials; then the experiments' correctness
# through --ptx: c = exp-batch8 (arg-min/max ask for a thread's last <= 8
# vectors at once), a = exp-short-across (rows_short loads laid across the
# block), d = exp-short-8 (a + 32 KiB rounds, --tile 32), e =
# exp-short-cs (rows_short's stores streaming); the variants
# under the bundled test executables too (REDUCTION_TEST_PTX).
set -u
R=/tmp/s8c1; mkdir -p "$R"; S=$R/summary.txt; : > "$S"
N=.gpu/bin/reduce
$N info >> "$S" 2>&1
bash .gpu/run-tests.sh > "$R/suite.log" 2>&1; echo "suite rc=$? (${SECONDS}s)" >> "$S"
grep -E "^== |^test result|FAILED|panicked" "$R/suite.log" | grep -v "^test result: ok" >> "$S"
B=$(ls .gpu/bin/shapes-*)
timeout 90 compute-sanitizer --tool memcheck $B ops::sum_f32 > "$R/memcheck-shapes.log" 2>&1; echo "memcheck shapes rc=$? (${SECONDS}s)" >> "$S"
tail -1 "$R/memcheck-shapes.log" >> "$S"
for v in base c; do
  timeout 120 $N --ptx .gpu/$v.ptx check --kernel single_pass --op argmax,argmin --type f32,f64,i32,u64,bf16 \
    --n 1,31,33,1000,4097,65537,2^20+7,2^22-1,2^22,2^22+3 > "$R/check-$v.log" 2>&1
  echo "check $v rc=$? $(grep -c MISMATCH "$R/check-$v.log") mismatches (${SECONDS}s)" >> "$S"
done
# the variants under the bundled tests (REDUCTION_TEST_PTX): c under
# operations and kernels, a and d under shapes and determinism
export REDUCTION_REQUIRE_GPU=1
for vt in c:operations c:kernels a:shapes a:determinism d:shapes d:determinism e:shapes; do
  v=${vt%%:*}; t=${vt#*:}; B=$(ls .gpu/bin/$t-*)
  REDUCTION_TEST_PTX=.gpu/$v.ptx timeout 150 $B > "$R/test-$v-$t.log" 2>&1; echo "test $v $t rc=$? (${SECONDS}s)" >> "$S"
  grep -E "^test result|FAILED" "$R/test-$v-$t.log" | head -5 >> "$S"
done
for v in a d e; do
  t=""; [ $v = d ] && t="--tile 32"
  for c in 16777216x16 67108864x4 8388608x32 2097152x128 1048576x256; do
    timeout 40 $N --ptx .gpu/$v.ptx run --shape $c --axis 1 $t --runs 3 >> "$R/check-$v.log" 2>&1
  done
  echo "shapes $v: $(grep -c ' OK' "$R/check-$v.log") OK, $(grep -c MISMATCH "$R/check-$v.log") mismatches (${SECONDS}s)" >> "$S"
done
tar -cf "$OUT/s8c1.tar" -C /tmp s8c1
cat "$S"
