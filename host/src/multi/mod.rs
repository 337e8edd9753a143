//! Reductions over data sharded across GPUs, combined through NCCL.
//!
//! Each GPU reduces its own shard with the library's default kernel (one
//! launch, on its own stream, all GPUs at once); then every GPU's result
//! (at most 16 bytes) and shard length go to every rank with one NCCL
//! all-gather, and each rank combines them **in rank order** with the
//! operation's own `combine` and `finish`. Gathering results, rather than
//! NCCL's all-reduce, is what lets every operation span GPUs: NCCL has no
//! arg-max, its min/max do not follow torch's NaN rules, and a norm or a
//! mean must be finished once, from the total. Every rank computes the same
//! bits, whatever its position.
//!
//! Two ways to run, as NCCL has them:
//! * **One process, all GPUs** ([`MultiReducer::all`], [`MultiReducer::on`]):
//!   `ncclCommInitAll` over the GPUs; shards are given one per GPU, or a
//!   host slice is split evenly ([`MultiReducer::reduce_host`]).
//! * **One process per GPU** ([`MultiReducer::from_rank`]): the way jobs
//!   span nodes. One process makes a [`UniqueId`], every process gets it
//!   (a file, a pipe, the job launcher's environment) and passes its rank
//!   and the world size; each reduces its own shard and gets the global
//!   result. `host/examples/one_process_per_gpu.rs` starts one process per
//!   GPU on one machine and hands them the id through a pipe.
//!
//! One GPU in one process needs no NCCL: the same calls run without it.
//! NCCL is loaded at run time; without it, [`Error::NcclMissing`] says where
//! a copy was found and how to link it (cudarc looks for `libnccl.so`,
//! PyTorch ships `libnccl.so.2`: [`link_dir`]).
//!
//! cudarc 0.19's `Comm` aborts its communicator twice when dropped (a use
//! after free, cudarc issue #584), so this reducer keeps its communicators
//! until the process exits: make one and keep it.

mod combine;
mod nccl;
mod operations;
mod sharded;

use std::mem::ManuallyDrop;
use std::ops::Range;
use std::sync::Mutex;

use cudarc::driver::{CudaContext, CudaSlice, DevicePtrMut};
use cudarc::nccl::Comm;

pub use nccl::{UniqueId, find_libnccl, link_dir, loaded_nccl, no_nccl_reason};
pub use sharded::{Sharded, split};

use combine::{COUNT_AT, SLOT, combine};

use crate::device::{Gpu, device_count, gpu_of};
use crate::error::{Error, Result, driver};
use crate::input::check_inputs;
use crate::input::{Element, Input, Source};
use crate::launch::Out;
use crate::options::Options;
use crate::ptx::Ptx;
use crate::reducer::Reducer;
use gpu::op::Reduction;
use nccl::nccl;

/// Reduces data spread over several GPUs (see the [module](self)).
///
/// ```no_run
/// use reduction::multi::MultiReducer;
/// let m = MultiReducer::all()?;                       // every GPU this process sees
/// let data: Vec<f32> = (0..1_000_000).map(|i| (i % 7) as f32).collect();
/// let shards = m.scatter(&data)?;                     // one device buffer per GPU
/// let views: Vec<_> = shards.iter().collect();
/// assert_eq!(m.sum(&views)?, data.iter().sum::<f32>());
/// let top = m.argmax(&views)?;                        // the global index
/// assert_eq!((top.value, top.index), (6.0, 6));
/// # Ok::<(), reduction::Error>(())
/// ```
pub struct MultiReducer {
    /// This process's GPUs, in rank order.
    reducers: Vec<Reducer>,
    /// The global rank of `reducers[0]`.
    first_rank: usize,
    world: usize,
    /// What the ranks exchange through (calls take turns).
    exchange: Mutex<Exchange>,
}

/// The communicators and the buffers of the exchange.
struct Exchange {
    /// One communicator per GPU of this process; none for one GPU alone.
    comms: Option<Vec<ManuallyDrop<Comm>>>,
    /// Per GPU: its slot and the gathered slots of all ranks.
    slots: Vec<(CudaSlice<u8>, CudaSlice<u8>)>,
}

// SAFETY: cudarc's `Comm` holds a raw `ncclComm_t`, hence not `Send`. NCCL
// lets a communicator be used from any thread as long as no two threads use
// it at once (NCCL's thread-safety notes); an `Exchange` is only reached
// through the reducer's mutex, one thread at a time.
unsafe impl Send for Exchange {}

impl std::fmt::Debug for MultiReducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let gpus: Vec<usize> = self.reducers.iter().map(|r| r.gpu().info().ordinal).collect();
        f.debug_struct("MultiReducer")
            .field("gpus", &gpus)
            .field("ranks", &self.ranks())
            .field("world", &self.world)
            .finish()
    }
}

impl MultiReducer {
    /// Every GPU the driver sees, in one process.
    ///
    /// ```no_run
    /// let m = reduction::multi::MultiReducer::all()?;
    /// println!("{} GPU(s)", m.world_size());
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn all() -> Result<Self> {
        let count = device_count()?;
        if count == 0 {
            return Err(Error::NoDevice { ordinal: 0, count });
        }
        Self::on(&(0..count).collect::<Vec<_>>())
    }

    /// The GPUs `ordinals` (distinct), in one process; ranks in that order.
    /// NCCL is needed for two or more.
    ///
    /// ```no_run
    /// use reduction::{Error, multi::MultiReducer};
    /// let m = MultiReducer::on(&[0])?; // one GPU: no NCCL needed
    /// assert!(matches!(MultiReducer::on(&[0, 0]), Err(Error::Invalid(_))));
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn on(ordinals: &[usize]) -> Result<Self> {
        Self::on_with_ptx(ordinals, Ptx::embedded())
    }

    /// [`MultiReducer::on`] with the kernels of `ptx` (your own operation's too: [`Ptx::with`]).
    pub fn on_with_ptx(ordinals: &[usize], ptx: Ptx) -> Result<Self> {
        if ordinals.is_empty() {
            return Err(Error::Invalid("a multi-GPU reducer needs at least one GPU".into()));
        }
        if let Some(d) = ordinals.iter().enumerate().find_map(|(i, d)| ordinals[..i].contains(d).then_some(d)) {
            return Err(Error::Invalid(format!("GPU {d} is listed twice")));
        }
        let count = device_count()?;
        if let Some(&ordinal) = ordinals.iter().find(|&&d| d >= count) {
            return Err(Error::NoDevice { ordinal, count });
        }
        if ordinals.len() > 1 {
            nccl::require()?;
        }
        let reducers = ordinals.iter().map(|&d| open(d, &ptx)).collect::<Result<Vec<_>>>()?;
        let comms = if reducers.len() > 1 {
            let streams = reducers.iter().map(|r| r.gpu().stream().clone()).collect();
            let comms = Comm::from_devices(streams).map_err(nccl("ncclCommInitAll"))?;
            Some(comms.into_iter().map(ManuallyDrop::new).collect())
        } else {
            None
        };
        Self::new(reducers, 0, ordinals.len(), comms)
    }

    /// This process's part of a job of `world` processes, one GPU each: rank
    /// `rank` on GPU `ordinal`, all ranks given the same `id` (made by one
    /// of them with [`UniqueId::new`]). Returns once every rank has joined
    /// (`ncclCommInitRank`).
    ///
    /// ```no_run
    /// use reduction::multi::{MultiReducer, UniqueId};
    /// let id = UniqueId::new()?; // rank 0 makes it; the others parse its text
    /// let m = MultiReducer::from_rank(0, 0, 1, &id)?;
    /// assert_eq!(m.sum(&[&vec![1.5f64; 4]])?, 6.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn from_rank(ordinal: usize, rank: usize, world: usize, id: &UniqueId) -> Result<Self> {
        if rank >= world {
            return Err(Error::Invalid(format!("rank {rank} of a world of {world}: ranks are 0..{world}")));
        }
        if i32::try_from(world).is_err() {
            return Err(Error::Invalid(format!("a world of {world} ranks: NCCL counts ranks in an i32")));
        }
        nccl::require()?;
        let reducer = open(ordinal, &Ptx::embedded())?;
        let stream = reducer.gpu().stream().clone();
        let comm = Comm::from_rank(stream, rank, world, id.to_nccl()).map_err(nccl("ncclCommInitRank"))?;
        Self::new(vec![reducer], rank, world, Some(vec![ManuallyDrop::new(comm)]))
    }

    fn new(
        reducers: Vec<Reducer>,
        first_rank: usize,
        world: usize,
        comms: Option<Vec<ManuallyDrop<Comm>>>,
    ) -> Result<Self> {
        let slots = reducers
            .iter()
            .map(|r| {
                Ok((
                    r.gpu().alloc::<u8>(SLOT, "a multi-GPU slot")?,
                    r.gpu().alloc::<u8>(SLOT * world, "the gathered slots")?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(MultiReducer { reducers, first_rank, world, exchange: Mutex::new(Exchange { comms, slots }) })
    }

    /// Ranks in the whole job.
    pub fn world_size(&self) -> usize {
        self.world
    }

    /// The global ranks of this process's GPUs.
    pub fn ranks(&self) -> Range<usize> {
        self.first_rank..self.first_rank + self.reducers.len()
    }

    /// One reducer per GPU of this process, in rank order: their GPUs and
    /// streams (allocate shards with them), and single-GPU reductions.
    pub fn reducers(&self) -> &[Reducer] {
        &self.reducers
    }

    /// Where [`MultiReducer::scatter`] cuts `n` elements: one range per GPU
    /// of this process, lengths differing by at most one.
    ///
    /// ```no_run
    /// let m = reduction::multi::MultiReducer::all()?;
    /// let parts = m.split(10);
    /// assert_eq!(parts.iter().map(|r| r.len()).sum::<usize>(), 10);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn split(&self, n: usize) -> Vec<Range<usize>> {
        split(n, self.reducers.len())
    }

    /// Copy `data` to the GPUs, one [`split`](Self::split) part each.
    pub fn scatter<T: Element>(&self, data: &[T]) -> Result<Vec<CudaSlice<T>>> {
        self.split(data.len())
            .into_iter()
            .zip(&self.reducers)
            .map(|(part, r)| r.gpu().stream().clone_htod(&data[part]).map_err(driver("cuMemcpyHtoD")))
            .collect()
    }

    /// Operation `R` over the shards of this process (one per GPU, in rank
    /// order), each given as the operation's inputs on that GPU (one, or
    /// two of one length for a dot product), host slices or device buffers;
    /// the same result on every rank. Checked before any GPU work: the
    /// number of shards and inputs, their lengths, each device buffer on its
    /// rank's GPU; arg-min/max of no elements at all is [`Error::Empty`]
    /// (known before the exchange in one process, after it across processes,
    /// on every rank alike).
    ///
    /// ```no_run
    /// use reduction::{multi::MultiReducer, op::Dot};
    /// let m = MultiReducer::on(&[0, 1])?;
    /// let (a, b) = (vec![1.0f32; 1000], vec![2.0f32; 1000]);
    /// let d = m.reduce::<Dot, f32, [f32]>(&[&[&a[..500], &b[..500]], &[&a[500..], &b[500..]]])?;
    /// assert_eq!(d, 2000.0);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce<R: Sharded<T>, T: Element, D: Input<T> + ?Sized>(&self, shards: &[&[&D]]) -> Result<R::Out> {
        self.reduce_with::<R, T, D>(shards, &Options::default())
    }

    /// [`reduce`](Self::reduce) with `opts` for every shard's kernel (the
    /// exponent of `PowerSum`).
    pub(crate) fn reduce_with<R: Sharded<T>, T: Element, D: Input<T> + ?Sized>(
        &self,
        shards: &[&[&D]],
        opts: &Options,
    ) -> Result<R::Out> {
        crate::dispatch::exponent(R::NAME, opts)?;
        let lens = self.checked_lens::<R, T, D>(shards)?;
        let local: u64 = lens.iter().sum();
        if R::NEEDS_AN_ELEMENT && local == 0 && self.world == self.reducers.len() {
            return Err(Error::Empty { op: R::NAME });
        }
        let mut exchange = self.exchange.lock().unwrap_or_else(|p| p.into_inner());
        for (((r, inputs), &n), (slot, _)) in self.reducers.iter().zip(shards).zip(&lens).zip(exchange.slots.iter_mut())
        {
            let mut bytes = [0u8; SLOT];
            bytes[COUNT_AT..COUNT_AT + 8].copy_from_slice(&n.to_le_bytes());
            r.gpu().stream().memcpy_htod(&bytes, slot).map_err(driver("cuMemcpyHtoD"))?;
            if n > 0 {
                let (addr, _guard) = slot.device_ptr_mut(r.gpu().stream());
                r.enqueue_to::<R::Shard, T, D>(inputs, opts, Out { addr, len: 1, done: 0 })?;
            }
        }
        let gathered = self.gather(&mut exchange)?;
        combine::<R, T>(&gathered)
    }

    /// The shards' lengths, once every shard is checked.
    fn checked_lens<R: Reduction<T>, T: Element, D: Input<T> + ?Sized>(&self, shards: &[&[&D]]) -> Result<Vec<u64>> {
        if shards.len() != self.reducers.len() {
            return Err(Error::Shards { given: shards.len(), gpus: self.reducers.len() });
        }
        let mut lens = Vec::with_capacity(shards.len());
        for (shard, (inputs, r)) in shards.iter().zip(&self.reducers).enumerate() {
            lens.push(check_inputs::<R, T, D>(inputs)? as u64);
            let expected = r.gpu().info().ordinal;
            for input in inputs.iter() {
                if let Source::Device(view) = input.source() {
                    let on = gpu_of(&view);
                    if on != expected {
                        return Err(Error::ShardDevice { shard, on, expected });
                    }
                }
            }
        }
        Ok(lens)
    }

    /// Every rank's slot, gathered to every GPU of this process and read
    /// back from the first (all hold the same bytes).
    fn gather(&self, exchange: &mut Exchange) -> Result<Vec<u8>> {
        let Exchange { comms, slots } = exchange;
        match comms {
            Some(comms) => {
                // one thread drives several GPUs: their calls form one group
                cudarc::nccl::group_start().map_err(nccl("ncclGroupStart"))?;
                let mut queued = Ok(());
                for (comm, (slot, all)) in comms.iter().zip(slots.iter_mut()) {
                    queued = queued.and(comm.all_gather(slot, all).map(drop).map_err(nccl("ncclAllGather")));
                }
                cudarc::nccl::group_end().map_err(nccl("ncclGroupEnd"))?;
                queued?;
            }
            None => {
                let (slot, all) = &mut slots[0];
                self.reducers[0].gpu().stream().memcpy_dtod(slot, all).map_err(driver("cuMemcpyDtoD"))?;
            }
        }
        for r in &self.reducers[1..] {
            r.gpu().synchronize()?;
        }
        let first = self.reducers[0].gpu().stream();
        first.clone_dtoh(&slots[0].1).map_err(driver("cuMemcpyDtoH"))
    }

    /// [`reduce`](Self::reduce) on a host slice split evenly over this
    /// process's GPUs (copied for this call; [`scatter`](Self::scatter) once
    /// to keep the shards on the GPUs).
    ///
    /// ```no_run
    /// use reduction::{Max, multi::MultiReducer};
    /// let m = MultiReducer::all()?;
    /// assert_eq!(m.reduce_host::<Max, i64>(&[3, -1, 9, 4])?, 9);
    /// # Ok::<(), reduction::Error>(())
    /// ```
    pub fn reduce_host<R: Sharded<T>, T: Element>(&self, data: &[T]) -> Result<R::Out> {
        let parts: Vec<&[T]> = self.split(data.len()).into_iter().map(|p| &data[p]).collect();
        self.one_input::<R, T, [T]>(&parts, &Options::default())
    }
}

/// A reducer on GPU `ordinal` with a stream of its own (NCCL's work goes
/// there too).
fn open(ordinal: usize, ptx: &Ptx) -> Result<Reducer> {
    let count = device_count()?;
    if ordinal >= count {
        return Err(Error::NoDevice { ordinal, count });
    }
    let ctx = CudaContext::new(ordinal).map_err(driver("cuCtxRetain"))?;
    let stream = ctx.new_stream().map_err(driver("cuStreamCreate"))?;
    Ok(Reducer::from_gpu(Gpu::from_stream(stream, ptx.clone())?))
}
