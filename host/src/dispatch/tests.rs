//! The dispatch on the CPU, for fake cards of 132, 108 and 24 SMs.

use super::*;
use crate::options::Determinism;
use gpu::layout::MODES_SMEM;
use gpu::op::{ArgMax, Dot, LogSumExp, Moments, Sum};

/// An H100 (132 SMs, 25 GB/s an SM), an A100 (108 SMs) and a small card
/// of 24 SMs holding 1536 threads each; every entry allows `most`
/// threads a block.
fn cards(most: u32) -> [(Tuning, u32, u32); 3] {
    let card = |sm_count, threads_per_sm, gbps: f64| {
        (Tuning { sm_count, threads_per_sm, bandwidth_per_sm: gbps * 1e9 }, most, 16)
    };
    [card(132, 2048, 25.4), card(108, 2048, 14.4), card(24, 1536, 12.0)]
}

#[test]
fn the_default_kernel_fills_each_card_in_one_launch() {
    for card in cards(1024) {
        let resident_threads = card.0.resident_threads();
        for n in [1usize, 1000, 1 << 20, 1 << 25, 1 << 28] {
            let p = plan(&Request::of::<Sum, f32>(n, &Options::default()), &card).unwrap();
            assert_eq!((p.kernel.id, p.levels.len(), p.smem), ("single_pass", 1, gpu::layout::SINGLE_PASS_SMEM));
            let grid = p.levels[0].launches[0].grid;
            assert_eq!(p.partials, grid as usize);
            assert!(grid as usize * p.block as usize <= resident_threads, "{n}: grid {grid} × {}", p.block);
            // a card of 1536 threads an SM holds one block of 1024, three of 512
            let default = card.0.default_block("sum", n);
            let want = if card.0.threads_per_sm % default == 0 { default } else { default / 2 };
            assert_eq!(p.block, want, "{n}");
            assert_eq!(p.entry, format!("single_pass_b{}_sum_f32", p.block));
        }
    }
}

#[test]
fn a_block_the_registers_do_not_allow_steps_down_or_is_refused() {
    for card in cards(640) {
        let p = plan(&Request::of::<ArgMax, f32>(1 << 28, &Options::default()), &card).unwrap();
        assert_eq!(p.block, 512);
        let asked = Options { block: Some(1024), ..Options::default() };
        let e = plan(&Request::of::<ArgMax, f32>(1 << 28, &asked), &card).unwrap_err().to_string();
        assert!(e.contains("at most 640 threads"), "{e}");
    }
    let none = cards(16)[0];
    assert!(plan(&Request::of::<Sum, f32>(1 << 20, &Options::default()), &none).is_err());
}

#[test]
fn the_grid_cap_and_teaching_kernels() {
    let card = cards(1024)[0];
    let capped = Options { max_grid: Some(7), ..Options::default() };
    let p = plan(&Request::of::<Dot, f32>(1 << 24, &capped), &card).unwrap();
    assert_eq!(p.levels[0].launches[0].grid, 7);
    for k in crate::registry::KERNELS {
        let opts = Options { kernel: Some(k), ..Options::default() };
        let p = plan(&Request::of::<Sum, i32>((1 << 22) + 3, &opts), &card).unwrap();
        assert_eq!((p.kernel.id, p.block), (k.id, DEFAULT_BLOCK), "{}", k.id);
        assert_eq!(p.levels.last().map(|l| l.outputs), Some(1));
    }
}

#[test]
fn the_modes_get_their_own_entries_and_partials() {
    let card = cards(1024)[0];
    let repro = Options { determinism: Determinism::GpuToGpu, ..Options::default() };
    let p = plan(&Request::of::<Sum, f32>(1 << 28, &repro), &card).unwrap();
    assert_eq!((p.entry.as_str(), p.smem), ("reproducible_sum_f32", MODES_SMEM));
    assert!(p.partials >= 1 && p.levels[0].launches[0].grid >= 1);
    let accurate = Options { accurate: true, ..Options::default() };
    let p = plan(&Request::of::<Sum, f64>(1 << 20, &accurate), &card).unwrap();
    assert_eq!(p.entry, "accurate_sum_f64");
    // an operation of the user's own is refused, named by the mode asked for
    let mut own = Request::of::<Sum, f32>(100, &accurate);
    own.out_bytes = 8;
    let e = plan(&own, &card).unwrap_err().to_string();
    assert!(e.starts_with("accurate does not support an operation of your own"), "{e}");
    own.options = repro;
    assert!(plan(&own, &card).unwrap_err().to_string().starts_with("gpu_to_gpu"));
}

#[test]
fn fit_block_steps_down_to_what_the_registers_allow() {
    let entry = |b: u32| format!("single_pass_b{b}_argmax_bf16");
    let most = |e: &str| Ok(if e.contains("b1024") { 896 } else { 1024 });
    assert_eq!(fit_block(None, 1024, entry, most).unwrap(), (512, entry(512)));
    assert_eq!(fit_block(None, 256, entry, most).unwrap(), (256, entry(256)));
    let err = fit_block(Some(1024), 1024, entry, most).unwrap_err().to_string();
    assert!(err.contains("at most 896 threads"), "{err}");
    // an entry whose one block size does not fit at all
    assert_eq!(fit_block(None, 1024, |_| "accurate_sum_f32".into(), |_| Ok(640)).unwrap().0, 512);
    assert!(fit_block(None, 256, entry, |_| Ok(0)).is_err());
}

/// No block, grid or tile is worked out outside this module: the words
/// of its choices appear in no other source of the workspace.
#[test]
fn no_choice_is_made_outside_the_dispatch() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let here = root.join("host/src/dispatch");
    let words = [["default", "_block"].concat(), ["fit", "_block"].concat(), [".tun", "ing()"].concat()];
    let mut folders: Vec<_> =
        ["host/src", "host/examples", "cli/src", "tests", "testkit/src", "xtask/src"].map(|d| root.join(d)).into();
    let (mut files, mut found) = (0, Vec::new());
    while let Some(dir) = folders.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && path != here {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files += 1;
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for w in words.iter().filter(|w| text.contains(w.as_str())) {
                    found.push(format!("{}: {w}", path.display()));
                }
            }
        }
    }
    assert!(files > 50, "{files} files");
    assert!(found.is_empty(), "choices made outside the dispatch: {found:?}");
}

/// A kernel whose registers fit one block of 1024 threads an SM runs
/// smaller blocks where the card holds a quarter more warps of them: with
/// `regs` registers a thread, an SM of 65536 registers and 2048 threads.
#[test]
fn a_smaller_block_where_it_fills_the_card_more() {
    let resident = |regs: u32| move |_: &str, b: u32| Ok(132 * (65536 / (regs * b)).min(2048 / b).min(32));
    let entry = |b: u32| format!("single_pass_b{b}_moments_f32");
    let pick = |block: u32, regs: u32| fuller_block(block, entry(block), entry, resident(regs)).unwrap().0;
    assert_eq!(pick(512, 70), 256); // 16 warps an SM at 512, 24 at 256 (28 at 128: not a quarter more)
    assert_eq!(pick(1024, 40), 512); // 32 warps at 1024, 48 at 512
    assert_eq!(pick(1024, 52), 1024); // 32 at 1024, 512 and 256, 36 at 128
    assert_eq!(pick(1024, 32), 1024); // full at 1024
    assert_eq!(pick(256, 32), 256);
}

#[test]
fn power_sums_of_order_one_and_two_launch_the_norms_entries() {
    use gpu::op::PowerSum;
    let card = cards(1024)[0];
    let of = |p: Option<f64>| {
        let opts = Options { p, ..Options::default() };
        plan(&Request::of::<PowerSum, gpu::half::bf16>(1 << 28, &opts), &card).unwrap()
    };
    for (p, entry, exponent) in [
        (None, "sum_squares_bf16", None),
        (Some(2.0), "sum_squares_bf16", None),
        (Some(1.0), "norm1_bf16", None),
        (Some(3.0), "power_sum_bf16", Some(3.0)),
        (Some(-1.0), "power_sum_bf16", Some(-1.0)),
    ] {
        let plan = of(p);
        assert!(plan.entry.ends_with(entry), "p = {p:?}: {}", plan.entry);
        assert_eq!(plan.exponent, exponent, "p = {p:?}");
    }
    let repro = Options { p: Some(2.0), determinism: Determinism::GpuToGpu, ..Options::default() };
    assert!(plan(&Request::of::<PowerSum, f32>(1000, &repro), &card).is_err(), "no reproducible power_sum");
}

/// The variance, whose merge is heavy, runs fewer blocks than the card
/// holds on a short input and all of them on a long one.
#[test]
fn the_variance_runs_fewer_blocks_on_short_inputs() {
    let card = cards(1024)[0];
    for (n, short) in [(1usize << 22, true), (1 << 28, false)] {
        let p = plan(&Request::of::<Moments, f32>(n, &Options::default()), &card).unwrap();
        let resident = card.resident_blocks(&p.entry, p.block, p.smem).unwrap();
        let grid = p.levels[0].launches[0].grid;
        let want = if short { grid_for_heavy_merges(n, 4, p.block, resident, card.0.sm_count) } else { resident };
        assert_eq!((grid, short), (want, grid < resident), "2^{}: {grid} blocks of {resident}", n.ilog2());
    }
}

/// logsumexp runs half the blocks the card holds where a thread would have
/// more than two rounds on a short input, else the grid of whole rounds.
#[test]
fn logsumexp_runs_half_the_blocks_where_its_rounds_are_not_whole() {
    let card = cards(1024)[0];
    for (n, half) in [(1usize << 22, false), (1 << 24, true), (1 << 28, false)] {
        let p = plan(&Request::of::<LogSumExp, f32>(n, &Options::default()), &card).unwrap();
        let resident = card.resident_blocks(&p.entry, p.block, p.smem).unwrap();
        let grid = p.levels[0].launches[0].grid;
        let want = if half { resident / 2 } else { grid_in_whole_rounds(n, 4, p.block, resident) };
        assert_eq!(grid, want, "2^{}: {grid} blocks of {resident}", n.ilog2());
    }
}

/// The public planning helpers give an answer for any arguments: a block of
/// 0 threads, a card of the largest counts (no division by zero, no
/// overflow; the plan itself refuses such blocks).
#[test]
fn planning_helpers_are_total() {
    let k = Kernel::find("reduce7").unwrap();
    assert_eq!(grid_for(k, 1000, 0, 0), 1);
    assert_eq!(grid_in_whole_rounds(1000, 4, 0, 0), 1);
    assert_eq!(grid_for_heavy_merges(usize::MAX, 16, 0, 0, 0), 1);
    assert_eq!(grid_for_heavy_merges(usize::MAX, 16, u32::MAX, u32::MAX, u32::MAX), u32::MAX);
    assert_eq!(grid_for_logsumexp(usize::MAX, 16, 0, 0, 0), 1);
    // one round a thread on every block: the fewest blocks that take it whole
    let whole = grid_in_whole_rounds(usize::MAX, 16, u32::MAX, u32::MAX);
    assert_eq!((grid_for_logsumexp(usize::MAX, 16, u32::MAX, u32::MAX, u32::MAX), whole), (whole, 67108865));
    assert!(depth(k, &levels(k, 1000, 0, 4), 0) > 0);
    let huge = Tuning { sm_count: u32::MAX, threads_per_sm: u32::MAX, bandwidth_per_sm: 1e9 };
    assert!([256, 512, 1024].contains(&huge.default_block("argmax", usize::MAX)));
    assert!((huge, 1024, 0).resident_blocks("any", 256, 0).unwrap() >= 1);
}

/// The columns' automatic grid is planned for half as many blocks where it
/// would run a second wave and no third: `nanmean` of 16384² `bf16` on an
/// H100 that holds three of its blocks an SM (396), not where it holds
/// four, under an explicit strategy, or in the portable order; the variance
/// of `f32`, declared four blocks an SM, keeps its 512, that of `bf16`,
/// declared two (264), runs 256 in one wave where 512 would run two.
#[test]
fn column_grids_run_one_wave_not_two() {
    let h100 = |per_sm| (cards(1024)[0].0, 1024, per_sm);
    let m = Shape::Columns(crate::shape::Matrix::new(16384, 16384));
    let welford = size_of::<gpu::op::Welford>(); // the variance's accumulator
    let launch = |card: &(Tuning, u32, u32), op, strategy, portable| {
        let (ty, acc) = if op == Op::Moments { (DType::F32, welford) } else { (DType::BF16, 8) };
        shape_launch(card, (op, ty, acc), 1 << 28, m, strategy, true, portable, None).unwrap()
    };
    let (auto, nanmean) = (Strategy::Auto, Op::NanMean);
    let (three, four) = (launch(&h100(3), nanmean, auto, false), launch(&h100(4), nanmean, auto, false));
    assert_eq!((three.grid, three.tile, three.split), (256, 1, 1)); // a chunk of rows
    assert_eq!((four.grid, four.tile, four.split), (512, 1, 2)); // two
    assert_eq!(launch(&h100(3), nanmean, auto, true).grid, 512);
    let asked = Strategy::Columns { wide: 1, chunks: 2 };
    assert_eq!(launch(&h100(3), nanmean, asked, false).grid, 512);
    let declared = launch(&h100(3), Op::Moments, auto, false);
    assert_eq!((declared.grid, declared.blocks_per_sm), (512, Some(4)));
    let half =
        shape_launch(&h100(1), (Op::Moments, DType::BF16, welford), 1 << 28, m, auto, true, false, None).unwrap();
    assert_eq!((half.grid, half.tile, half.split, half.blocks_per_sm), (256, 1, 1, Some(2)));
    let tall = Shape::Columns(crate::shape::Matrix::new(1 << 24, 16));
    let half =
        shape_launch(&h100(1), (Op::Moments, DType::BF16, welford), 1 << 28, tall, auto, true, false, None).unwrap();
    assert_eq!((half.grid, half.split), (256, 256));
    // rows and segments keep their plans
    let rows = Shape::Rows(crate::shape::Matrix::new(16384, 16384));
    let p = shape_launch(&h100(3), (Op::Moments, DType::F32, welford), 1 << 28, rows, auto, true, false, None).unwrap();
    assert_eq!(p, shape_plan(Op::Moments, DType::F32, welford, 1 << 28, rows, auto, true, h100(3).0.fit()).unwrap());
}

/// Half as many column blocks only where the SMs still get one and a half
/// or more each: an A100 (108 SMs) holding two of the entry's blocks an SM
/// (216) keeps its 256 blocks, a second wave, rather than run 128.
#[test]
fn fewer_column_blocks_still_give_each_sm_one_and_a_half() {
    let a100 = (cards(1024)[1].0, 1024, 2);
    let m = Shape::Columns(crate::shape::Matrix::new(16384, 16384));
    let p = shape_launch(&a100, (Op::NanMean, DType::BF16, 8), 1 << 28, m, Strategy::Auto, true, false, None).unwrap();
    assert!(second_wave(p.grid as u64, 216));
    assert_eq!(p.grid, 256);
}
