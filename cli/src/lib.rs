//! The tools around the `reduction` library, behind the `reduce` command:
//! the benchmark and its report ([`bench`](mod@bench)), the same kernels in CUDA C++
//! through NVRTC ([`nvrtc`]), the chart ([`svg`]), CUDA-event timing
//! ([`timing`]), the operations' benchmark ([`ops_bench`]) and the
//! reduce-by-key benchmark ([`by_key_bench`]), rows, columns and segments
//! ([`shapes_bench`]), reductions across GPUs ([`multi_gpu`]), and the page
//! of every card's measurements side by side ([`cards`]). They use only the
//! library's public API.

pub mod bench;
pub mod by_key_bench;
pub mod cards;
pub mod explain;
pub mod latency;
pub mod multi_gpu;
pub mod nvrtc;
pub mod ops_bench;
pub mod report;
pub mod shapes_bench;
pub mod svg;
pub mod timing;
pub mod twins;
