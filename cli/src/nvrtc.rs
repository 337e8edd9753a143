//! The CUDA C++ reference kernels, compiled at run time with NVRTC.
//!
//! `cuda/reduction_kernels.cu` holds the same kernels as `gpu/src/kernels/`
//! written in CUDA C++ the way the sources write them (Harris's slides, the
//! 2023 review), with entry points named and typed exactly like the Rust PTX entries
//! (`reduce3_sum_i32`, `reduce7_b256_sum_f32`, ...), for the sum on `i32` and
//! `f32`. [`compile_reference`] turns that text into a [`Ptx`] with NVRTC
//! (libnvrtc, loaded at run time through cudarc), so the host loads, plans,
//! launches and times it with the same code as the Rust kernels:
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rust = reduction::Reducer::new()?;
//! let ptx = reduce::nvrtc::compile_reference(rust.gpu().info())?;
//! let cuda = reduction::Reducer::with_ptx(0, ptx)?;
//! # Ok(()) }
//! ```
//!
//! Without libnvrtc, or on a GPU older than the oldest architecture the
//! installed NVRTC compiles for, [`compile_reference`] returns a one-line
//! reason instead (for a benchmark's "n/a" column); it never panics.
//!
//! ```
//! // Without a GPU or NVRTC this still lists what the CUDA C++ file defines:
//! let entries = reduce::nvrtc::reference_entries();
//! assert!(entries.contains(&"reduce9_b128_sum_i32".to_string()));
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind};

use reduction::cudarc::nvrtc::{CompileError, CompileOptions, compile_ptx_with_opts, sys};

use reduction::{DType, Op, Ptx, device::DeviceInfo, registry::KERNELS};

/// The CUDA C++ source of the reference kernels (`cuda/reduction_kernels.cu`),
/// embedded at build time.
///
/// ```
/// assert!(reduce::nvrtc::CUDA_REFERENCE_SOURCE.contains("__global__"));
/// ```
pub const CUDA_REFERENCE_SOURCE: &str = include_str!("../../cuda/reduction_kernels.cu");

/// The [`Ptx::origin`] of the compiled reference kernels.
///
/// ```
/// assert_eq!(reduce::nvrtc::ORIGIN, "CUDA C++ (NVRTC)");
/// ```
pub const ORIGIN: &str = "CUDA C++ (NVRTC)";

/// The operator and element types the reference source instantiates.
///
/// ```
/// assert_eq!(reduce::nvrtc::REFERENCE_OPS, [reduction::Op::Sum]);
/// ```
pub const REFERENCE_OPS: [Op; 1] = [Op::Sum];
/// See [`REFERENCE_OPS`].
///
/// ```
/// assert_eq!(reduce::nvrtc::REFERENCE_TYPES, [reduction::DType::I32, reduction::DType::F32]);
/// ```
pub const REFERENCE_TYPES: [DType; 2] = [DType::I32, DType::F32];

/// Why the reference cannot be compiled when libnvrtc cannot be loaded.
///
/// ```
/// assert!(reduce::nvrtc::NO_NVRTC.starts_with("libnvrtc not found"));
/// ```
pub const NO_NVRTC: &str = "libnvrtc not found (install the CUDA toolkit or put its lib64 on LD_LIBRARY_PATH)";

/// The PTX entries [`CUDA_REFERENCE_SOURCE`] defines, in registry order: every
/// kernel of [`KERNELS`], at each of its block sizes, for [`REFERENCE_OPS`] ×
/// [`REFERENCE_TYPES`].
///
/// ```
/// let e = reduce::nvrtc::reference_entries();
/// assert!(e.contains(&"reduce3_sum_i32".to_string()));
/// assert!(e.contains(&"reduce7_b256_sum_f32".to_string()));
/// assert!(e.contains(&"single_pass_b1024_sum_i32".to_string()));
/// assert!(!e.iter().any(|e| e.contains("_max_") || e.ends_with("_u64")));
/// ```
pub fn reference_entries() -> Vec<String> {
    KERNELS.iter().flat_map(|k| k.all_entries(&REFERENCE_OPS, &REFERENCE_TYPES).collect::<Vec<_>>()).collect()
}

/// `None` if libnvrtc can be loaded, else the reason ([`NO_NVRTC`]).
///
/// ```
/// // On a machine without the CUDA toolkit this is Some("libnvrtc not found ...").
/// let _ = reduce::nvrtc::no_nvrtc_reason();
/// ```
pub fn no_nvrtc_reason() -> Option<String> {
    // SAFETY: only tries to dlopen libnvrtc under the names cudarc knows.
    if unsafe { sys::is_culib_present() } { None } else { Some(NO_NVRTC.to_string()) }
}

/// The version of the libnvrtc that cudarc loads, e.g. `(12, 9)`.
///
/// ```
/// match reduce::nvrtc::nvrtc_version() {
///     Ok((major, minor)) => println!("NVRTC {major}.{minor}"),
///     Err(why) => println!("no NVRTC: {why}"), // e.g. on a machine without the CUDA toolkit
/// }
/// ```
pub fn nvrtc_version() -> Result<(i32, i32), String> {
    if let Some(why) = no_nvrtc_reason() {
        return Err(why);
    }
    guarded(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers; the library is present (checked above).
        unsafe { sys::nvrtcVersion(&mut major, &mut minor) }.result().map_err(|e| format!("nvrtcVersion: {e:?}"))?;
        Ok((major, minor))
    })
}

/// Compiles [`CUDA_REFERENCE_SOURCE`] with NVRTC for the GPU `info` describes
/// (`--gpu-architecture=compute_XY`, see [`compile_reference_for`]).
///
/// Errors are one line: [`NO_NVRTC`] without libnvrtc, the architecture
/// NVRTC cannot target, or the first lines of NVRTC's log.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use reduction::Reducer;
/// use reduce::nvrtc::{ORIGIN, compile_reference};
/// let rust = Reducer::new()?;
/// let ptx = compile_reference(rust.gpu().info())?;
/// assert_eq!(ptx.origin(), ORIGIN);
/// let cuda = Reducer::with_ptx(0, ptx)?; // same API, CUDA C++ kernels
/// # Ok(()) }
/// ```
pub fn compile_reference(info: &DeviceInfo) -> Result<Ptx, String> {
    compile_source(CUDA_REFERENCE_SOURCE, info)
}

/// [`compile_reference`] of another CUDA C++ text with the same entries
/// (`reduce bench --cuda-source FILE`).
pub fn compile_source(source: &str, info: &DeviceInfo) -> Result<Ptx, String> {
    compile_source_for(source, info.compute_capability)
}

/// The reference source with one planted fault: `single_pass` stores each
/// block's partial 2^28 elements past the end of `partials`, an illegal
/// address that ends its CUDA context. Tests start `reduce bench` with it
/// (`--cuda-source`) to show that one faulting twin costs its own cell only.
///
/// ```
/// let planted = reduce::nvrtc::planted_fault();
/// assert_ne!(planted, reduce::nvrtc::CUDA_REFERENCE_SOURCE);
/// assert!(planted.contains("partials[blockIdx.x + (1u << 28)] = v;"));
/// ```
pub fn planted_fault() -> String {
    CUDA_REFERENCE_SOURCE.replacen("partials[blockIdx.x] = v;", "partials[blockIdx.x + (1u << 28)] = v;", 1)
}

/// Compiles [`CUDA_REFERENCE_SOURCE`] with NVRTC for compute capability
/// `(major, minor)`: `compute_{major}{minor}` if this NVRTC supports it, else
/// the newest architecture it supports below that (PTX runs on later GPUs
/// through the driver's JIT). Fails if the GPU is older than every
/// architecture NVRTC supports (NVRTC 13 starts at compute_75).
///
/// Options: NVRTC's defaults (full optimisation, IEEE float arithmetic, no
/// fast math) plus the architecture.
///
/// ```
/// use reduce::nvrtc::{ORIGIN, compile_reference_for};
/// match compile_reference_for((9, 0)) {
///     Ok(ptx) => assert_eq!(ptx.origin(), ORIGIN),
///     Err(why) => println!("no CUDA C++ reference: {why}"), // e.g. no libnvrtc
/// }
/// ```
pub fn compile_reference_for(compute_capability: (i32, i32)) -> Result<Ptx, String> {
    compile_source_for(CUDA_REFERENCE_SOURCE, compute_capability)
}

/// [`compile_reference_for`] of another CUDA C++ text.
pub fn compile_source_for(source: &str, compute_capability: (i32, i32)) -> Result<Ptx, String> {
    if let Some(why) = no_nvrtc_reason() {
        return Err(why);
    }
    let (major, minor) = compute_capability;
    let wanted = major * 10 + minor;
    let archs = supported_archs()?;
    let Some(&arch) = archs.iter().filter(|&&a| a <= wanted).max() else {
        let (v0, v1) = nvrtc_version().unwrap_or((0, 0));
        let oldest = archs.iter().min().map_or("none".to_string(), |a| format!("compute_{a}"));
        return Err(format!("NVRTC {v0}.{v1} compiles for {oldest} and later; this GPU is sm_{major}{minor}"));
    };
    let opts = CompileOptions {
        options: vec![format!("--gpu-architecture=compute_{arch}")],
        name: Some("reduction_kernels.cu".to_string()),
        ..Default::default()
    };
    let ptx = guarded(|| compile_ptx_with_opts(source, opts).map_err(|e| describe(&e, arch)))?;
    Ok(Ptx::from_text(ptx.to_src(), ORIGIN))
}

/// The architectures this NVRTC compiles for, as `75, 80, ...`.
fn supported_archs() -> Result<Vec<i32>, String> {
    guarded(|| {
        let mut count = 0;
        // SAFETY: a valid out-pointer; the library is present (the callers check).
        unsafe { sys::nvrtcGetNumSupportedArchs(&mut count) }
            .result()
            .map_err(|e| format!("nvrtcGetNumSupportedArchs: {e:?}"))?;
        let mut archs = vec![0; count.max(0) as usize];
        // SAFETY: `archs` has room for the `count` entries NVRTC writes.
        unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
            .result()
            .map_err(|e| format!("nvrtcGetSupportedArchs: {e:?}"))?;
        Ok(archs)
    })
}

/// A compile error as one line: the first lines of NVRTC's log.
fn describe(e: &CompileError, arch: i32) -> String {
    let what = format!("NVRTC failed to compile cuda/reduction_kernels.cu for compute_{arch}");
    match e {
        CompileError::CompileError { nvrtc, log, .. } => {
            let log = log.to_string_lossy();
            let lines: Vec<&str> = log.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "^").take(4).collect();
            if lines.is_empty() { format!("{what}: {nvrtc:?}") } else { format!("{what}: {}", lines.join(" | ")) }
        }
        other => format!("{what}: {other:?}"),
    }
}

/// Runs `f`, turning a panic inside cudarc (a symbol missing from an
/// unexpected libnvrtc) into an error.
fn guarded<R>(f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("panic");
        Err(format!("NVRTC call failed: {}", msg.lines().next().unwrap_or("panic")))
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use reduction::registry::{BLOCK_SIZES, BlockParam, Scheme};

    /// The source without `//` and `/* */` comments.
    fn code() -> String {
        let mut out = String::new();
        let mut rest = CUDA_REFERENCE_SOURCE;
        while !rest.is_empty() {
            let line_c = rest.find("//");
            let block_c = rest.find("/*");
            match (line_c, block_c) {
                (Some(l), b) if b.is_none_or(|b| l < b) => {
                    out.push_str(&rest[..l]);
                    rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
                }
                (_, Some(b)) => {
                    out.push_str(&rest[..b]);
                    rest = rest[b..].find("*/").map_or("", |e| &rest[b + e + 2..]);
                }
                _ => {
                    out.push_str(rest);
                    rest = "";
                }
            }
        }
        out
    }

    /// The body of `#define name(...)`, continuation lines joined.
    fn macro_body(code: &str, name: &str) -> String {
        let head = format!("#define {name}(");
        let start = code.find(&head).unwrap_or_else(|| panic!("no #define {name}"));
        let mut body = String::new();
        for line in code[start..].lines() {
            body.push_str(line.trim_end().trim_end_matches('\\'));
            body.push(' ');
            if !line.trim_end().ends_with('\\') {
                break;
            }
        }
        body
    }

    /// The kernel ids of the lines `macro(id)` at the start of a line.
    fn instantiated(code: &str, mac: &str) -> Vec<String> {
        let head = format!("{mac}(");
        code.lines().filter_map(|l| l.trim().strip_prefix(&head)?.strip_suffix(')').map(str::to_string)).collect()
    }

    /// `_sum_i32` from `kernel##_b##block##_sum_i32`: the suffixes a macro pastes.
    fn suffixes(body: &str) -> BTreeSet<String> {
        body.split("##")
            .filter_map(|p| p.strip_prefix("_sum_"))
            .map(|p| format!("sum_{}", p.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap()))
            .collect()
    }

    /// Expands the instantiation lines by the macros' rules, without a C preprocessor.
    fn expanded_entries() -> BTreeSet<String> {
        let code = code();
        let runtime = suffixes(&macro_body(&code, "INSTANTIATE"));
        let compiled = suffixes(&macro_body(&code, "INSTANTIATE_BLOCK"));
        let blocks_body = macro_body(&code, "INSTANTIATE_BLOCKS");
        let blocks: Vec<u32> = blocks_body
            .split("INSTANTIATE_BLOCK(kernel,")
            .skip(1)
            .map(|p| p.split(')').next().unwrap().trim().parse().unwrap())
            .collect();
        assert_eq!(blocks, BLOCK_SIZES, "INSTANTIATE_BLOCKS must cover the registry's block sizes");
        let mut out = BTreeSet::new();
        for k in instantiated(&code, "INSTANTIATE") {
            out.extend(runtime.iter().map(|s| format!("{k}_{s}")));
        }
        let single_pass = suffixes(&macro_body(&code, "INSTANTIATE_SINGLE_PASS_BLOCK"));
        let single_pass_blocks: Vec<u32> = macro_body(&code, "INSTANTIATE_SINGLE_PASS")
            .split("INSTANTIATE_SINGLE_PASS_BLOCK(kernel,")
            .skip(1)
            .map(|p| p.split(')').next().unwrap().trim().parse().unwrap())
            .collect();
        assert_eq!(single_pass_blocks, BLOCK_SIZES, "INSTANTIATE_SINGLE_PASS must cover the registry's block sizes");
        for (mac, suffixes) in [("INSTANTIATE_BLOCKS", &compiled), ("INSTANTIATE_SINGLE_PASS", &single_pass)] {
            for k in instantiated(&code, mac) {
                for b in &blocks {
                    out.extend(suffixes.iter().map(|s| format!("{k}_b{b}_{s}")));
                }
            }
        }
        out
    }

    #[test]
    fn one_instantiation_line_per_kernel() {
        let code = code();
        let macros = ["INSTANTIATE", "INSTANTIATE_BLOCKS", "INSTANTIATE_SINGLE_PASS"];
        for k in KERNELS {
            let (mac, signature) = match (k.scheme, k.block_param) {
                (Scheme::SinglePass, _) => {
                    ("INSTANTIATE_SINGLE_PASS", "(const T *input, const T *, unsigned long long n, T *partials,")
                }
                (_, BlockParam::Runtime) => ("INSTANTIATE", "(const T *g_idata, T *g_odata, unsigned int n)"),
                (_, BlockParam::Compiled) => ("INSTANTIATE_BLOCKS", "(const T *g_idata, T *g_odata, unsigned int n)"),
            };
            let lines: usize =
                macros.iter().map(|m| instantiated(&code, m).iter().filter(|id| *id == k.id).count()).sum();
            let here = instantiated(&code, mac).iter().filter(|id| *id == k.id).count();
            assert_eq!((here, lines), (1, 1), "{}: expected one `{mac}({})` line and no other", k.id, k.id);
            assert!(code.contains(&format!("void {}{signature}", k.id)), "{}", k.id);
        }
    }

    #[test]
    fn macros_expand_to_the_reference_entries() {
        let want: BTreeSet<String> = reference_entries().into_iter().collect();
        assert_eq!(want.len(), reference_entries().len(), "duplicate entry names");
        assert_eq!(expanded_entries(), want);
        for t in REFERENCE_TYPES {
            assert!(want.contains(&format!("reduce1_sum_{}", t.name())));
            assert!(want.contains(&format!("vectorized_b1024_sum_{}", t.name())));
        }
        assert!(want.contains("reduce5_sum_f32"));
        assert_eq!(want.len(), 5 * 2 + 6 * BLOCK_SIZES.len() * 2);
    }

    #[test]
    fn no_volatile_last_warp_and_no_includes() {
        let code = code();
        // Harris's `volatile T* vsmem = sdata` idiom; the only volatile left
        // is single_pass's completion flag for the host
        assert!(
            !code.contains("volatile T") && code.matches("volatile").count() == 1,
            "the last warp must use __syncwarp, not volatile"
        );
        assert!(!code.contains("#include"), "NVRTC compiles the file with no include path");
        assert!(code.contains("__syncwarp(FULL_MASK)"));
        assert!(code.contains("__shfl_down_sync(FULL_MASK"));
        // the comment that explains the choice is still there
        assert!(CUDA_REFERENCE_SOURCE.contains("volatile"));
    }

    #[test]
    fn comment_stripping() {
        assert!(code().contains("INSTANTIATE_BLOCKS(reduce7)"));
        assert!(!code().contains("Harris's slide 22"));
    }

    #[test]
    fn nvrtc_compiles_the_reference() {
        if let Some(why) = no_nvrtc_reason() {
            assert_eq!(compile_reference_for((9, 0)).unwrap_err(), NO_NVRTC);
            println!("SKIPPED: {why}");
            return;
        }
        let (v0, v1) = nvrtc_version().unwrap();
        let want: BTreeSet<String> = reference_entries().into_iter().collect();
        for cc in [(7, 5), (9, 0)] {
            let ptx = match compile_reference_for(cc) {
                Ok(p) => p,
                Err(e) if cc == (7, 5) && e.contains("and later") => continue, // a future NVRTC without sm_75
                Err(e) => panic!("NVRTC {v0}.{v1}, sm_{}{}: {e}", cc.0, cc.1),
            };
            assert_eq!(ptx.origin(), ORIGIN);
            assert_eq!(ptx.target(), Some(format!("sm_{}{}", cc.0, cc.1).as_str()));
            let got: BTreeSet<String> = ptx.entries().map(str::to_string).collect();
            assert_eq!(got, want, "NVRTC {v0}.{v1}, sm_{}{}", cc.0, cc.1);
            // each twin takes the parameters of its kernel's launch, as the Rust entry does
            for k in KERNELS {
                for entry in k.all_entries(&REFERENCE_OPS, &REFERENCE_TYPES) {
                    assert_eq!(ptx.params(&entry).unwrap(), k.scheme.params(), "CUDA C++ {entry}");
                }
            }
            let one = ptx.module_for("reduce7_b256_sum_f32").unwrap();
            assert_eq!(Ptx::from_text(one, "one").entries().collect::<Vec<_>>(), ["reduce7_b256_sum_f32"]);
        }
        // older than every architecture NVRTC supports: an error, not a panic
        assert!(compile_reference_for((3, 0)).unwrap_err().contains("and later"));
    }
}
