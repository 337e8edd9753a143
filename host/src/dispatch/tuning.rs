//! The launch choices that depend on the GPU, derived from what the driver
//! reports: its SMs, the threads an SM holds (from the compute capability)
//! and its memory bandwidth. Every automatic choice of the planner that
//! depends on the card reads it from here; nothing else holds a number that
//! fits one card.
//!
//! The rules were measured on 132-SM cards (an H100 and an H200) and are
//! written per resident thread, per SM or per byte of bandwidth, so that
//! they scale with the card. `reduce shapes --sweep` and `reduce ops
//! --block B` measure every alternative on the card at hand
//! (`docs/src/performance/tuning.md` and the pages after it).

use crate::device::{DeviceInfo, Gpu};
use gpu::names::Op;
use gpu::shape::Fit;

/// Elements per resident thread from which the default kernel runs blocks
/// of 1024 threads: 2^25 elements over the 132 × 2048 threads of an H100 or
/// H200 (measured there: 256 threads as fast or faster up to 2^22, 1024
/// fastest at 2^28, the two tied at 2^25).
const LARGE_PER_THREAD: usize = 124;

/// Elements per resident thread, times 4, from which arg-min/max run
/// blocks of 512: 2^21 elements on 132 × 2048 threads (about 7.75 a
/// thread). Their 48-62 registers hold an SM to 1024 threads whatever the
/// block, so there the larger block halves the partials the last block
/// combines (measured on an H200: 512 faster from 2^21 for every type).
const ARG_PER_THREAD_X4: usize = 31;

/// Memory bandwidth per SM (bytes/s) from which the rows' and segments'
/// teams aim at eight 16-byte vectors a lane rather than four. Measured on
/// rows of 256 and 1024 f32: an H200 (36 GB/s an SM) is 1-4% faster at
/// eight, an H100 (25 GB/s an SM) 2-3% faster at four (`docs/src/guide/shapes.md`);
/// the boundary lies between the two cards.
const EIGHT_VECTORS_FROM: f64 = 30e9;

/// What the planner takes from the GPU.
///
/// ```
/// use reduction::dispatch::Tuning;
/// let h100 = Tuning { sm_count: 132, threads_per_sm: 2048, bandwidth_per_sm: 25.4e9 };
/// assert_eq!(h100.default_block("sum", 1 << 22), 256);
/// assert_eq!(h100.default_block("sum", 1 << 25), 1024);
/// assert_eq!(h100.default_block("argmax", 1 << 21), 512);
/// assert_eq!(h100.fit().vectors_per_lane, 4);
/// let small = Tuning { sm_count: 24, threads_per_sm: 1536, bandwidth_per_sm: 15e9 };
/// assert_eq!(small.default_block("sum", 1 << 23), 1024); // 227 elements a resident thread
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuning {
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Threads one SM holds at once.
    pub threads_per_sm: u32,
    /// Peak memory bandwidth over the SMs, bytes/s.
    pub bandwidth_per_sm: f64,
}

impl Tuning {
    /// The tuning of the GPU `info` describes.
    ///
    /// ```
    /// # let info = reduction::device::DeviceInfo { name: "H200".into(), ordinal: 0, compute_capability: (9, 0), sm_count: 132,
    /// #     l2_bytes: 60 << 20, total_mem: 0, mem_clock_khz: 3_201_000, bus_width_bits: 6016, driver_version: 13000 };
    /// let t = reduction::dispatch::Tuning::of(&info);
    /// assert_eq!((t.sm_count, t.threads_per_sm), (132, 2048));
    /// assert_eq!(t.fit(), reduction::shape::Fit::PORTABLE); // the H200's is the portable one
    /// ```
    pub fn of(info: &DeviceInfo) -> Tuning {
        let sm_count = info.sm_count.max(1);
        Tuning {
            sm_count,
            threads_per_sm: info.threads_per_sm(),
            bandwidth_per_sm: info.peak_bandwidth() / sm_count as f64,
        }
    }

    /// Threads resident on the whole GPU.
    pub fn resident_threads(&self) -> usize {
        (self.sm_count as usize).saturating_mul(self.threads_per_sm as usize)
    }

    /// The default kernel's block size for `n` elements of the operation
    /// named `op`: 1024 threads from 124 elements a resident
    /// thread, 512 for arg-min/max from about 7.75, else 256.
    pub fn default_block(&self, op: &str, n: usize) -> u32 {
        let arg = op == Op::ArgMin.name() || op == Op::ArgMax.name();
        let resident = self.resident_threads();
        if n >= resident.saturating_mul(LARGE_PER_THREAD) {
            1024
        } else if arg && n.saturating_mul(4) >= resident.saturating_mul(ARG_PER_THREAD_X4) {
            512
        } else {
            256
        }
    }

    /// The shaped kernels' fit: tiles, column blocks and teams for this GPU.
    pub fn fit(&self) -> Fit {
        let vectors = if self.bandwidth_per_sm >= EIGHT_VECTORS_FROM { 8 } else { 4 };
        Fit::of(self.sm_count as u64, (self.threads_per_sm / 32) as u64, vectors)
    }
}

impl Gpu {
    /// The launch choices for this GPU ([`Tuning`]).
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// println!("blocks of {} threads for 2^28 floats", gpu.tuning().default_block("sum", 1 << 28));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn tuning(&self) -> Tuning {
        Tuning::of(self.info())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(sm_count: u32, threads_per_sm: u32, gbps_per_sm: f64) -> Tuning {
        Tuning { sm_count, threads_per_sm, bandwidth_per_sm: gbps_per_sm * 1e9 }
    }

    /// On the cards the rules were measured on, the choices are the
    /// measured ones (the thresholds 2^25 and 2^21 elements).
    #[test]
    fn the_measured_cards_keep_their_choices() {
        for t in [card(132, 2048, 25.4), card(132, 2048, 36.5)] {
            for (op, n, block) in [
                ("sum", (1 << 25) - (1 << 16), 256),
                ("sum", 1 << 25, 1024),
                ("argmax", (1 << 21) - (1 << 12), 256),
                ("argmax", 1 << 21, 512),
                ("argmin", 1 << 28, 1024),
                ("dot", 1 << 21, 256),
            ] {
                assert_eq!(t.default_block(op, n), block, "{op} {n}");
            }
            let f = t.fit();
            assert_eq!((f.min_warps, f.column_blocks), (16384, 512));
        }
        assert_eq!(card(132, 2048, 36.5).fit(), Fit::PORTABLE);
        assert_eq!(card(132, 2048, 25.4).fit().vectors_per_lane, 4);
    }

    /// Other cards scale: a 108-SM A100 and a small 24-SM card take larger
    /// blocks sooner and aim at fewer warps and blocks.
    #[test]
    fn smaller_cards_scale() {
        let a100 = card(108, 2048, 14.4);
        assert_eq!(a100.default_block("sum", 1 << 25), 1024);
        assert_eq!(a100.default_block("sum", 1 << 24), 256);
        assert_eq!((a100.fit().min_warps, a100.fit().column_blocks), (8192, 256));
        let small = card(24, 1536, 12.0);
        assert_eq!(small.default_block("sum", 1 << 22), 256);
        assert_eq!(small.default_block("sum", 1 << 23), 1024);
        assert_eq!(small.default_block("argmax", 1 << 19), 512);
        assert_eq!((small.fit().min_warps, small.fit().column_blocks, small.fit().vectors_per_lane), (2048, 64, 4));
    }
}
