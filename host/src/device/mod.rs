//! The GPU: a CUDA context and stream (through cudarc, with the driver
//! loaded at run time), what the device is ([`DeviceInfo`]), whether one can
//! be used here ([`no_gpu_reason`]), the kernels loaded from PTX, and the
//! launch choices tuned to it ([`Tuning`](crate::dispatch::Tuning)); its memory is `memory.rs`. Launching is `launch/`.

mod memory;

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaStream, DevicePtr, DriverError};
use gpu::op::power::EXPONENT_SYMBOL;

pub(crate) use memory::{Mapped, gpu_of};

use crate::error::{Error, Result, driver};
use crate::ptx::Ptx;

/// What the device is, read from its attributes.
///
/// ```no_run
/// let r = reduction::Reducer::new()?;
/// let info = r.gpu().info();
/// println!("{} ({}), {} SMs, {:.0} GB/s", info.name, info.arch(), info.sm_count, info.peak_bandwidth() / 1e9);
/// # Ok::<(), reduction::Error>(())
/// ```
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceInfo {
    /// `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Device ordinal (0 when read from a report that does not record it).
    #[cfg_attr(feature = "serde", serde(default))]
    pub ordinal: usize,
    /// `(9, 0)` for Hopper.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// L2 cache size in bytes.
    pub l2_bytes: usize,
    /// Device memory in bytes.
    pub total_mem: usize,
    /// Peak memory clock in kHz.
    pub mem_clock_khz: u32,
    /// Memory bus width in bits.
    pub bus_width_bits: u32,
    /// Driver version, e.g. 13000 for CUDA 13.0.
    pub driver_version: i32,
}

impl DeviceInfo {
    /// Theoretical DRAM bandwidth in bytes/s: memory clock × bus width × 2
    /// (double data rate).
    ///
    /// ```
    /// # let info = reduction::device::DeviceInfo { name: "G80".into(), ordinal: 0, compute_capability: (1, 0), sm_count: 16,
    /// #     l2_bytes: 0, total_mem: 0, mem_clock_khz: 900_000, bus_width_bits: 384, driver_version: 0 };
    /// // Harris's slide 6: 384-bit, 900 MHz DDR = 86.4 GB/s.
    /// assert_eq!(info.peak_bandwidth(), 86.4e9);
    /// ```
    pub fn peak_bandwidth(&self) -> f64 {
        2.0 * self.mem_clock_khz as f64 * 1e3 * self.bus_width_bits as f64 / 8.0
    }

    /// Threads one SM holds at once, from the compute capability (CUDA's
    /// table of limits per architecture): 1024 on Turing (7.5), 1536 on
    /// 8.6, 8.7, 8.9 and 12.x, 2048 on the others from Volta on.
    ///
    /// ```
    /// # let info = |cc| reduction::device::DeviceInfo { name: "x".into(), ordinal: 0, compute_capability: cc, sm_count: 1,
    /// #     l2_bytes: 0, total_mem: 0, mem_clock_khz: 0, bus_width_bits: 0, driver_version: 0 };
    /// assert_eq!(info((9, 0)).threads_per_sm(), 2048);
    /// assert_eq!(info((8, 9)).threads_per_sm(), 1536);
    /// assert_eq!(info((7, 5)).threads_per_sm(), 1024);
    /// ```
    pub fn threads_per_sm(&self) -> u32 {
        match self.compute_capability {
            (7, 5) => 1024,
            (8, 6 | 7 | 9) | (12, _) => 1536,
            _ => 2048,
        }
    }

    /// `sm_90` for compute capability 9.0.
    ///
    /// ```
    /// # let info = reduction::device::DeviceInfo { name: "H100".into(), ordinal: 0, compute_capability: (9, 0), sm_count: 132,
    /// #     l2_bytes: 0, total_mem: 0, mem_clock_khz: 0, bus_width_bits: 0, driver_version: 0 };
    /// assert_eq!(info.compute_capability, (9, 0));
    /// assert_eq!(info.arch(), "sm_90");
    /// ```
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.compute_capability.0, self.compute_capability.1)
    }
}

/// An entry, its block, its dynamic shared memory and the blocks an SM it
/// is declared for, if any: what its blocks resident at once depend on.
type Resident = (String, u32, u32, Option<u32>);

/// An open GPU: context, stream, device info and the kernels loaded so far.
///
/// ```no_run
/// use reduction::{Gpu, Ptx};
/// let gpu = Gpu::open(0, Ptx::embedded())?;
/// let (free, total) = gpu.mem_info()?;
/// println!("{}: {free} of {total} bytes free", gpu.info().name);
/// # Ok::<(), reduction::Error>(())
/// ```
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    ptx: Ptx,
    /// Each loaded entry, the PTX types of its parameters and the address
    /// of its module's exponent ([`gpu::op::power::EXPONENT_SYMBOL`]), if
    /// the module has one.
    functions: Mutex<HashMap<String, Loaded>>,
    /// The exponent last queued for each module global (its address: the
    /// bits), held from writing it to queuing the launch that reads it, so
    /// that no other thread's write comes between.
    exponents: Mutex<HashMap<u64, u64>>,
    /// The blocks of an entry the card holds at once, by [`Resident`].
    resident: Mutex<HashMap<Resident, u32>>,
    allocations: AtomicUsize,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).field("ptx", &self.ptx.origin()).finish()
    }
}

/// Whether a module's code reads the exponent global (a `power_sum`
/// entry's): every module declares it (`Ptx::module_for` keeps the
/// declarations), only those entries load it.
fn reads_exponent(module: &str) -> bool {
    module.lines().any(|l| l.contains(EXPONENT_SYMBOL) && !l.trim_start().starts_with('.'))
}

/// A loaded entry: its function, its parameters' PTX types, and the device
/// address of its module's exponent, if it reads one.
#[derive(Clone)]
struct Loaded {
    func: CudaFunction,
    params: std::sync::Arc<[String]>, // shared: a launch of power_sum clones this
    exponent: Option<u64>,
}

/// The most threads a block of `func` can have (its registers may allow
/// fewer than 1024).
fn max_threads(func: &CudaFunction) -> Result<u32> {
    let mut threads = 0i32;
    // SAFETY: reads one attribute of a loaded function into an int.
    unsafe {
        sys::cuFuncGetAttribute(
            &mut threads,
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            func.cu_function(),
        )
    }
    .result()
    .map_err(driver("cuFuncGetAttribute"))?;
    Ok(threads.max(0) as u32)
}

/// Shared memory a launch gets without asking: more must be allowed for
/// the function first (a column block of the half types' variance holds
/// 48 KiB of accumulators and the "last block" flag).
const SMEM_UNASKED: u32 = 48 << 10;

/// Let `func` be launched with `smem` bytes of dynamic shared memory, where
/// that is more than [`SMEM_UNASKED`] and the card has it; else the
/// driver's error. Before a launch, and before asking the occupancy API,
/// which counts no blocks at all of a function not yet allowed its memory.
pub(crate) fn allow_smem(func: &CudaFunction, smem: u32) -> std::result::Result<(), DriverError> {
    use sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as MAX_DYNAMIC;
    if smem <= SMEM_UNASKED {
        return Ok(());
    }
    func.set_attribute(MAX_DYNAMIC, smem as i32)
}

/// Why no GPU can be used here, or `None` if one can: the reason tests
/// print after `SKIPPED:`.
///
/// ```
/// // On a machine without the NVIDIA driver this is Some("no CUDA driver: ...").
/// let _ = reduction::device::no_gpu_reason();
/// ```
pub fn no_gpu_reason() -> Option<String> {
    match device_count() {
        Ok(0) => Some(Error::NoDevice { ordinal: 0, count: 0 }.to_string()),
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// The number of CUDA devices; [`Error::NoDriver`] without the driver.
pub(crate) fn device_count() -> Result<usize> {
    // SAFETY: only tries to dlopen libcuda; cudarc panics on first use without it.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDriver);
    }
    match CudaContext::device_count() {
        Ok(n) => Ok(n.max(0) as usize),
        Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => Ok(0),
        Err(e) => Err(driver("cuInit/cuDeviceGetCount")(e)),
    }
}

impl Gpu {
    /// Open device `ordinal` with the kernels of `ptx`.
    ///
    /// ```no_run
    /// use reduction::{Error, Gpu, Ptx};
    /// let gpu = Gpu::open(0, Ptx::embedded())?;
    /// assert_eq!(gpu.info().ordinal, 0);
    /// assert!(matches!(Gpu::open(99, Ptx::embedded()), Err(Error::NoDevice { ordinal: 99, .. })));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn open(ordinal: usize, ptx: Ptx) -> Result<Self> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).map_err(driver("cuCtxRetain"))?;
        let stream = ctx.default_stream();
        Self::from_stream(stream, ptx)
    }

    /// Use an existing stream (and its context): reductions are ordered after
    /// the work already queued on it.
    ///
    /// ```no_run
    /// let ctx = cudarc::driver::CudaContext::new(0).unwrap();
    /// let gpu = reduction::Gpu::from_stream(ctx.new_stream().unwrap(), reduction::Ptx::embedded())?;
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn from_stream(stream: Arc<CudaStream>, ptx: Ptx) -> Result<Self> {
        let ctx = stream.context().clone();
        let attr = |a: Attr| ctx.attribute(a).map_err(driver("cuDeviceGetAttribute"));
        let mut driver_version = 0;
        // SAFETY: writes one int.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) }.result().map_err(driver("cuDriverGetVersion"))?;
        let info = DeviceInfo {
            name: ctx.name().map_err(driver("cuDeviceGetName"))?,
            ordinal: ctx.ordinal(),
            compute_capability: ctx.compute_capability().map_err(driver("cuDeviceGetAttribute"))?,
            sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
            total_mem: ctx.total_mem().map_err(driver("cuDeviceTotalMem"))?,
            mem_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)? as u32,
            bus_width_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)? as u32,
            driver_version,
        };
        Ok(Gpu {
            ctx,
            stream,
            info,
            ptx,
            functions: Mutex::default(),
            exponents: Mutex::default(),
            resident: Mutex::default(),
            allocations: AtomicUsize::new(0),
        })
    }

    /// What the device is.
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// assert!(gpu.info().sm_count > 0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The stream every launch goes to.
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// let buf = gpu.stream().clone_htod(&[1u32, 2, 3]).unwrap();
    /// assert_eq!(gpu.stream().clone_dtoh(&buf).unwrap(), [1, 2, 3]);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The PTX the kernels come from.
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// assert_eq!(gpu.ptx().origin(), "embedded");
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn ptx(&self) -> &Ptx {
        &self.ptx
    }

    /// The kernel `entry`, JIT-compiled from its own small module on first use.
    ///
    /// ```no_run
    /// use reduction::{Error, Gpu, Ptx};
    /// let gpu = Gpu::open(0, Ptx::embedded())?;
    /// let reduce3 = gpu.function("reduce3_sum_i32")?;
    /// assert!(matches!(gpu.function("reduce0_sum_i32"), Err(Error::MissingEntry { .. })));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn function(&self, entry: &str) -> Result<CudaFunction> {
        self.loaded(entry).map(|l| l.func)
    }

    /// [`Gpu::function`], refused with [`Error::Signature`] unless the
    /// entry's parameters are the PTX types `params` (a launch scheme's
    /// [`Scheme::params`](crate::registry::Scheme::params)), before it is ever launched.
    ///
    /// ```no_run
    /// use reduction::{Error, Gpu, Ptx, registry::Kernel};
    /// let gpu = Gpu::open(0, Ptx::embedded())?;
    /// let reduce3 = gpu.function_for("reduce3_sum_i32", Kernel::find("reduce3")?.scheme.params())?;
    /// let wrong = gpu.function_for("reduce3_sum_i32", Kernel::find("single_pass")?.scheme.params());
    /// assert!(matches!(wrong, Err(Error::Signature { .. })));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn function_for(&self, entry: &str, params: &[&str]) -> Result<CudaFunction> {
        self.function_bounded(entry, params, None)
    }

    /// [`Gpu::function_for`], compiled for blocks of `bound.0` threads, at
    /// least `bound.1` of them an SM, when given (`.maxntid`,
    /// `.minnctapersm`: CUDA's `__launch_bounds__`; the JIT fits its
    /// registers to them) and the entry has no launch bounds of its own
    /// (`gpu::names::launch_bounds`). Each declaration is loaded and kept
    /// apart.
    pub(crate) fn function_bounded(
        &self,
        entry: &str,
        params: &[&str],
        bound: Option<(u32, u32)>,
    ) -> Result<CudaFunction> {
        let Loaded { func, params: found, .. } = self.loaded_with(entry, bound)?;
        if found.iter().map(String::as_str).eq(params.iter().copied()) {
            return Ok(func);
        }
        Err(Error::Signature {
            entry: entry.to_string(),
            ptx: self.ptx.origin().to_string(),
            expected: params.join(", "),
            found: found.join(", "),
        })
    }

    /// The entry, its parameters' PTX types and its exponent's address,
    /// loaded on first use.
    fn loaded(&self, entry: &str) -> Result<Loaded> {
        self.loaded_with(entry, None)
    }

    /// [`Self::loaded`], with the launch bounds `bound` declared when given
    /// (cached under its own key).
    fn loaded_with(&self, entry: &str, bound: Option<(u32, u32)>) -> Result<Loaded> {
        let mut cache = self.functions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let bound = gpu::names::launch_bounds(entry).or(bound);
        let key = match bound {
            Some((block, blocks)) => format!("{entry} at {blocks} blocks of {block} an SM"),
            None => entry.to_string(),
        };
        if let Some(f) = cache.get(&key) {
            return Ok(f.clone());
        }
        let src = self.ptx.module_for_card(entry, self.info.compute_capability)?;
        let params = Ptx::from_text(src.as_str(), "").params(entry).unwrap_or_default().into();
        let has_exponent = reads_exponent(&src);
        let load_err =
            |source| Error::ModuleLoad { entry: entry.to_string(), ptx: self.ptx.origin().to_string(), source };
        let load = |text: String| {
            let module = self.ctx.load_module(cudarc::nvrtc::Ptx::from_src(text)).map_err(load_err)?;
            let func = module.load_function(entry).map_err(load_err)?;
            Ok::<_, Error>((module, func))
        };
        let (mut module, mut func) = match bound {
            Some((block, blocks)) => load(crate::ptx::with_block_bound(&src, block, Some(blocks)))?,
            None => load(src.clone())?,
        };
        // an entry of one block size whose registers leave no room for that
        // block (arg-min/max of f64 at 1024 threads: 65 on sm_90) is
        // compiled again, told its block (at most 64 registers)
        if let Some(block) = gpu::names::compiled_block(entry)
            && max_threads(&func)? < block
        {
            (module, func) = load(crate::ptx::with_block_bound(&src, block, None))?;
        }
        // the function holds its module, and so the global, while it is cached
        let exponent = match has_exponent {
            true => {
                Some(module.get_global(EXPONENT_SYMBOL, &self.stream).map_err(load_err)?.device_ptr(&self.stream).0)
            }
            false => None,
        };
        let loaded = Loaded { func, params, exponent };
        cache.insert(key, loaded.clone());
        Ok(loaded)
    }

    /// Queue `launch` of `entry` with `exponent` (a
    /// [`PowerSum`](gpu::op::PowerSum) entry's `p`) in its module's global,
    /// written first on the stream where the last launch of the entry had
    /// another (two `cuMemsetD32Async`: no host memory, nothing waited
    /// for); with `None` (every other operation: the plan has none),
    /// `launch` alone. [`Error::Invalid`] for an exponent and an entry that
    /// reads none, before anything is queued.
    pub(crate) fn launch_with_exponent(
        &self,
        entry: &str,
        exponent: Option<f64>,
        launch: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let Some(p) = exponent else {
            return launch();
        };
        let Some(addr) = self.loaded(entry)?.exponent else {
            return Err(Error::Invalid(format!("{entry}: takes no exponent (p = {p})")));
        };
        let mut queued = self.exponents.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let bits = p.to_bits();
        if queued.get(&addr) != Some(&bits) {
            queued.remove(&addr); // unknown until both halves are queued
            let stream = self.stream.cu_stream();
            for (offset, half) in [(0, bits as u32), (4, (bits >> 32) as u32)] {
                // SAFETY: `addr` is the 8-byte global of the entry's module
                // (little-endian words), which the cached function keeps
                // loaded; each memset writes one aligned word of it, in
                // stream order: after the launches that read the old value.
                unsafe { cudarc::driver::sys::cuMemsetD32Async(addr + offset, half, 1, stream) }
                    .result()
                    .map_err(driver("cuMemsetD32Async"))?;
            }
            queued.insert(addr, bits);
        }
        launch()
    }

    /// Blocks of kernel `entry` that fit on the whole GPU at once, launched
    /// with `block` threads and `smem` bytes of shared memory (occupancy API
    /// × SM count); cached.
    ///
    /// ```no_run
    /// use reduction::{Gpu, Ptx, registry::shared_mem_bytes};
    /// let gpu = Gpu::open(0, Ptx::embedded())?;
    /// let blocks = gpu.resident_blocks("reduce7_b256_sum_f32", 256, shared_mem_bytes(256, 4))?;
    /// assert!(blocks >= gpu.info().sm_count);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn resident_blocks(&self, entry: &str, block: u32, smem: u32) -> Result<u32> {
        self.resident_declared(entry, block, smem, None)
    }

    /// [`Gpu::resident_blocks`] of `entry` compiled for at least `per_sm`
    /// blocks of `block` an SM where given, as a shaped plan declares it
    /// (`ShapePlan::blocks_per_sm`, [`Gpu::function_bounded`]).
    pub(crate) fn resident_declared(&self, entry: &str, block: u32, smem: u32, per_sm: Option<u32>) -> Result<u32> {
        let key = (entry.to_string(), block, smem, per_sm);
        if let Some(&n) = self.resident.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(n);
        }
        let func = self.loaded_with(entry, per_sm.map(|blocks| (block, blocks)))?.func;
        allow_smem(&func, smem).map_err(driver("cuFuncSetAttribute"))?;
        let per_sm = func
            .occupancy_max_active_blocks_per_multiprocessor(block, smem as usize, None)
            .map_err(driver("cuOccupancyMaxActiveBlocksPerMultiprocessor"))?;
        let n = per_sm.max(1) * self.info.sm_count;
        self.resident.lock().unwrap_or_else(|p| p.into_inner()).insert(key, n);
        Ok(n)
    }

    /// The most threads a block of `entry` can have on this device (its
    /// registers may allow fewer than 1024).
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// assert!(gpu.max_threads_per_block("accurate_sum_f32")? >= 128);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn max_threads_per_block(&self, entry: &str) -> Result<u32> {
        max_threads(&self.function(entry)?)
    }

    /// An event that records time (cudarc's default event does not).
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// let mut buf = gpu.alloc::<u8>(1 << 30, "the buffer")?;
    /// let (start, stop) = (gpu.timing_event()?, gpu.timing_event()?);
    /// start.record(gpu.stream()).unwrap();
    /// gpu.stream().memset_zeros(&mut buf).unwrap();
    /// stop.record(gpu.stream()).unwrap();
    /// gpu.synchronize()?;
    /// println!("memset: {} ms", start.elapsed_ms(&stop).unwrap());
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn timing_event(&self) -> Result<CudaEvent> {
        self.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(driver("cuEventCreate"))
    }

    /// Wait for everything queued on the stream.
    ///
    /// ```no_run
    /// let gpu = reduction::Gpu::open(0, reduction::Ptx::embedded())?;
    /// let mut buf = gpu.alloc::<u32>(1024, "the buffer")?;
    /// gpu.stream().memset_zeros(&mut buf).unwrap();
    /// gpu.synchronize()?; // the memset has finished
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(driver("cuStreamSynchronize"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry's module declares the exponent; only `power_sum`'s read it.
    #[test]
    fn only_power_sum_entries_read_the_exponent() {
        let ptx = Ptx::embedded();
        for entry in ["single_pass_b256_sum_f32", "segments_norm_f32", "reduce3_sum_i32", "reproducible_sum_f64"] {
            let module = ptx.module_for(entry).unwrap();
            assert!(module.contains(EXPONENT_SYMBOL) && !reads_exponent(&module), "{entry}");
        }
        let power: Vec<&str> = ptx.entries().filter(|e| e.contains("_power_sum_")).collect();
        assert_eq!(power.len(), 60); // 4 types: 6 blocks of the default kernel, 9 shaped kernels
        for entry in power {
            // the paired entry of an operation without that form holds only a `trap`
            assert_eq!(reads_exponent(&ptx.module_for(entry).unwrap()), !gpu::names::paired_trap(entry), "{entry}");
        }
    }
}
