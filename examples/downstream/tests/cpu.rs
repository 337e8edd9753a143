//! What a project that depends on the library can check on any machine, a
//! GPU or none: the kernels it embeds, the plan of a reduction on a card
//! described by its numbers, the CPU twin of the reproducible sum, and a
//! missing GPU reported as a typed error, never a panic.

use reduction::dispatch::{Request, Tuning, plan};
use reduction::op::Sum;
use reduction::{Error, Options, Ptx, Reducer};

#[test]
fn the_kernels_are_embedded() {
    let ptx = Ptx::embedded();
    let entries: Vec<&str> = ptx.entries().collect();
    assert!(entries.len() > 1000, "{} entries", entries.len());
    assert!(entries.contains(&"single_pass_b256_sum_f32"));
}

#[test]
fn a_sum_is_planned_for_a_card_without_touching_one() {
    let h100 = (Tuning { sm_count: 132, threads_per_sm: 2048, bandwidth_per_sm: 25e9 }, 1024, 16);
    let p = plan(&Request::of::<Sum, f32>(1 << 24, &Options::default()), &h100).expect("a plan");
    assert!(p.entry.starts_with("single_pass_b"), "{}", p.entry);
    assert_eq!(p.levels.len(), 1); // one launch
}

#[test]
fn the_reproducible_sum_has_a_cpu_twin() {
    // quarters: every order of the additions gives the same, exact, sum
    let x: Vec<f32> = (0..100_000).map(|i| (i % 7) as f32 * 0.25).collect();
    assert_eq!(reduction::twin::fixed_order::<Sum, f32>(&x, &x).unwrap(), 74_998.75);
}

#[test]
fn no_gpu_is_an_error_and_a_gpu_sums() {
    match Reducer::new() {
        Ok(r) => assert_eq!(r.sum(&[1.0f32, 2.0, 3.0][..]).expect("a sum"), 6.0),
        Err(e) => assert!(matches!(e, Error::NoDriver | Error::NoDevice { .. }), "{e}"),
    }
}
