#!/usr/bin/env bash
# Everything the results pages report for one GPU, measured in one sitting on
# that GPU, each file named by what it measures:
#
#   bash cli/baselines/card.sh check OUT   # the GPU suite, the sanitizer
#   bash cli/baselines/card.sh speed OUT   # every benchmark beside its vendors
#   bash cli/baselines/card.sh speed OUT ops ops-vendor   # only the steps named
#
# Run from the repository root of a checkout whose binaries were built by
# `cargo xtask bundle` (they are read from .gpu/bin; the GPU machine needs the
# driver, the CUDA toolkit's nvcc and compute-sanitizer, PyTorch and CuPy, and
# no Rust). OUT receives:
#
#   check: info.txt, suite.log (REDUCTION_REQUIRE_GPU=1), sanitize.log
#   speed: info.txt, bench-i32.json, bench-f32.json (Harris's table, Rust and
#          CUDA C++), ops.json with ops-vendor.jsonl (torch, CuPy/CUB),
#          shapes.json with shapes-vendor.jsonl (torch, CuPy, and CUB's
#          DeviceSegmentedReduce built with nvcc), modes.json with
#          modes-cub.jsonl (CUB's plain and reproducible sums, built with
#          nvcc), read-ceiling.jsonl (the swept read-only kernel),
#          explain-raw-i32.txt (Nsight Compute's counters for each teaching
#          step, `reduce explain`; needs ncu)
#
# Each step is bounded in time and a failed step does not stop the others;
# `summary.txt` in OUT lists each step's exit status and seconds, and is
# printed last. Steps: check: suite, sanitize; speed: read-ceiling, bench,
# ops, ops-vendor, shapes, shapes-vendor, shapes-cub, modes, modes-cub,
# explain. Named steps (to split a card's sitting over several commands)
# add to the summary instead of starting it again.
set -u
part=${1:-}
out=${2:-}
if [ -z "$part" ] || [ -z "$out" ]; then
    echo "usage: bash cli/baselines/card.sh check|speed OUT [STEP...]" >&2
    exit 2
fi
shift 2
named=" $* " # the steps asked for; none: every step of the part
mkdir -p "$out"
bin=.gpu/bin
summary="$out/summary.txt"
[ $# -gt 0 ] || : > "$summary"

want() { [ "$named" = "  " ] || [[ "$named" == *" $1 "* ]]; }

step() { # step NAME SECONDS COMMAND...: run, log its exit status and time
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@"
    echo "$name: exit $? ($((SECONDS - t0)) s)" >> "$summary"
}

{
    # the commit the binaries were built from (`reduce --version`)
    echo "commit $("$bin/reduce" --version | sed 's/.*commit //'), $(date -u +%Y-%m-%d)"
    "$bin/reduce" info
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
} > "$out/info.txt" 2>&1

case "$part" in
check)
    if want suite; then
        step suite 420 bash .gpu/run-tests.sh > "$out/suite.log" 2>&1
        grep -E "^test result" "$out/suite.log" |
            awk '{p+=$4; f+=$6; i+=$8} END {print "suite: " p " passed, " f " failed, " i " ignored"}' >> "$summary"
        grep -E "FAILED|panicked|SKIPPED" "$out/suite.log" | head -5 >> "$summary"
    fi
    if want sanitize; then
        step sanitize 300 "$bin/xtask" sanitize --bin "$bin/reduce" --broken-ptx .gpu --logs "$out/sanitize" > "$out/sanitize.log" 2>&1
        cat "$out/sanitize.log" >> "$summary"
    fi
    ;;
speed)
    if want read-ceiling; then
        nvcc -O3 -arch=sm_90 -o /tmp/read_ceiling cli/baselines/read_ceiling.cu &&
            step read-ceiling 180 /tmp/read_ceiling 2^23 2^24 2^25 2^27 2^29 2^30 2^31 --runs 30 > "$out/read-ceiling.jsonl" 2> /dev/null
        grep -h '"what":"read_ceiling"' "$out/read-ceiling.jsonl" | cut -c1-200 >> "$summary"
    fi
    if want bench; then
        for t in i32 f32; do
            step "bench $t" 240 "$bin/reduce" bench --type "$t" --json "$out/bench-$t.json" > "$out/bench-$t.txt" 2>&1
        done
        grep -hE "n/a|MISMATCH" "$out"/bench-*.txt | head -5 >> "$summary"
    fi
    want ops &&
        step ops 300 "$bin/reduce" ops --n 2^22,2^28 --runs 50 --timing queued --result device --json "$out/ops.json" > "$out/ops.txt" 2>&1
    want ops-vendor &&
        step ops-vendor 300 python3 cli/baselines/ops_vendor.py 2^22,2^28 50 --timing queued > "$out/ops-vendor.jsonl" 2> /dev/null
    want shapes &&
        step shapes 300 "$bin/reduce" shapes --runs 30 --json "$out/shapes.json" > "$out/shapes.txt" 2>&1
    mkdir -p /tmp/segment-lengths
    want shapes-vendor &&
        step shapes-vendor 300 env SEGMENT_LENGTHS_DIR=/tmp/segment-lengths python3 cli/baselines/shapes_vendor.py 30 > "$out/shapes-vendor.jsonl" 2> /dev/null
    # CUB's DeviceSegmentedReduce on the segments shapes-vendor wrote (and the rows), with its fixed-size form where this CCCL has it
    want shapes-cub &&
        { nvcc -O3 -std=c++17 -arch=sm_90 -DFIXED_SIZE cli/baselines/cub_segmented_reduce.cu -o /tmp/cub_segmented 2> /dev/null ||
            nvcc -O3 -std=c++17 -arch=sm_90 cli/baselines/cub_segmented_reduce.cu -o /tmp/cub_segmented; } &&
        step shapes-cub 300 /tmp/cub_segmented 30 /tmp/segment-lengths/*.i64 >> "$out/shapes-vendor.jsonl" 2> /dev/null
    want modes &&
        step modes 200 "$bin/reduce" modes --n 2^28 --runs 50 --json "$out/modes.json" > "$out/modes.txt" 2>&1
    want modes-cub &&
        nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr cli/baselines/cub_determinism.cu -o /tmp/cub_determinism &&
        step modes-cub 120 /tmp/cub_determinism 268435456 50 > "$out/modes-cub.jsonl" 2> /dev/null
    want explain &&
        step explain 300 "$bin/reduce" explain --raw "$out/explain-raw-i32.txt" > "$out/explain.txt" 2>&1
    ;;
*)
    echo "usage: bash cli/baselines/card.sh check|speed OUT [STEP...]" >&2
    exit 2
    ;;
esac
cat "$summary"
