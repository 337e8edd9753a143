// Element-balanced segmented f32 sum, warp-persistent (prototype v2): a warp takes tiles
// of TC chunks; a chunk is 32 lanes x VPL 16-byte vectors, copied by cp.async into one of
// NBUF stages of the warp with the chunk's segment ends (the offsets between the chunk
// index's entries), so the copies of the next chunks never wait on this one's segments.
// Lane j walks its 4*VPL contiguous elements against the ends; a warp's segmented scan
// joins the lanes' open runs with the carry from the previous chunk; segments across
// tiles leave pieces (two slots a tile) that the last-arriving warp folds in tile order.
#pragma once
#include "segments_merge_block.cuh"

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp16(void* s, const void* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(s)), "l"(g));
}
__device__ __forceinline__ void cp8(void* s, const void* g) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_addr(s)), "l"(g));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// chunk_seg[c]: the segments whose end is at most c*chunk (0 for c = 0, count for c = chunks)
// (tile_index with tile = chunk)

template <int VPL, int NBUF, int ECAP>
struct WarpStage {
  float4 data[NBUF][32 * VPL];
  long long ends[NBUF][ECAP];
};

template <int WARPS, int VPL, int NBUF, int ECAP, int TC>
__global__ __launch_bounds__(WARPS * 32) void seg_warp(const float* __restrict__ x, long long n,
                                                       const long long* __restrict__ offsets, long long count,
                                                       const long long* __restrict__ chunk_seg, float* __restrict__ out,
                                                       float* __restrict__ pieces, unsigned* __restrict__ tickets) {
  constexpr int ITEMS = 4 * VPL;
  constexpr long long CH = 32 * ITEMS;  // elements a chunk
  constexpr long long TILE = CH * TC;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  using St = WarpStage<VPL, NBUF, ECAP>;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  St& st = reinterpret_cast<St*>(smem_raw)[w];
  const long long chunks = (n + CH - 1) / CH;
  const long long tiles = (chunks + TC - 1) / TC;
  const long long gw = blockIdx.x * (long long)WARPS + w, W = (long long)gridDim.x * WARPS;
  const int rel = lane * ITEMS;

  for (long long t = gw; t < tiles; t += W) {
    const long long c0 = t * TC, c1 = min(c0 + TC, chunks);
    const long long te0 = c0 * CH, te1 = min(c1 * CH, n);
    // the tile's chunk index: lane l holds chunk_seg[c0 + l], and lane 0 also the one past 32
    long long idx = c0 + lane <= chunks ? chunk_seg[c0 + lane] : count;
    long long idx_last = c0 + 32 <= chunks ? chunk_seg[min(c0 + 32, chunks)] : count;
    auto S = [&](long long c) -> long long {  // c in c0..=c1 (warp-uniform)
      long long d = c - c0;
      long long v = __shfl_sync(~0u, idx, (int)(d & 31));
      return d == 32 ? idx_last : v;
    };
    // copy chunk c (data and its ends) into buffer b
    auto issue = [&](long long c, int b) {
      if (c < c1) {
        long long e0 = c * CH;
        long long full = n / 4;  // whole vectors
        const float4* src = reinterpret_cast<const float4*>(x);
#pragma unroll
        for (int q = 0; q < VPL; ++q) {
          int l = q * 32 + lane;
          long long v = e0 / 4 + l;
          float4* dst = &st.data[b][l ^ ((l >> 3) & 3)];
          if (v < full)
            cp16(dst, src + v);
          else {
            float4 z;
            long long r = 4 * v;
            z.x = r < n ? x[r] : 0.f;
            z.y = r + 1 < n ? x[r + 1] : 0.f;
            z.z = r + 2 < n ? x[r + 2] : 0.f;
            z.w = r + 3 < n ? x[r + 3] : 0.f;
            *dst = z;
          }
        }
        long long s0 = S(c), s1 = S(c + 1);
        int k = (int)(s1 - s0);
        if (k <= ECAP)
          for (int i = lane; i < k; i += 32) cp8(&st.ends[b][i], offsets + s0 + i + 1);
      }
      cp_commit();
    };
    float carry = 0.f;
    bool tile_crossed = false;
#pragma unroll
    for (int i = 0; i < NBUF - 1; ++i) issue(c0 + i, i);
    for (long long c = c0; c < c1; ++c) {
      const int b = (int)((c - c0) % NBUF);
      issue(c + NBUF - 1, (int)((c - c0 + NBUF - 1) % NBUF));
      cp_wait<NBUF - 1>();
      __syncwarp();
      const long long e0 = c * CH, s0 = S(c), s1 = S(c + 1);
      const int k = (int)(s1 - s0);
      const bool in_sh = k <= ECAP;
      const long long* ends = st.ends[b];
      auto end_at = [&](int p) -> int { return (int)((in_sh ? ends[p] : offsets[s0 + p + 1]) - e0); };
      float v[ITEMS];
#pragma unroll
      for (int q = 0; q < VPL; ++q) {
        int l = VPL * lane + q;
        float4 a = st.data[b][l ^ ((l >> 3) & 3)];
        v[4 * q] = a.x;
        v[4 * q + 1] = a.y;
        v[4 * q + 2] = a.z;
        v[4 * q + 3] = a.w;
      }
      int p = 0;
      if (lane > 0) {
        int lo = 0, hi = k;
        while (lo < hi) {
          int mid = (lo + hi) >> 1;
          if (end_at(mid) <= rel)
            lo = mid + 1;
          else
            hi = mid;
        }
        p = lo;
      }
      const int p_first = p;
      int next = p < k ? end_at(p) : 0x7fffffff;
      float acc = 0.f, head = 0.f;
      bool crossed = false;
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) {
        while (next <= rel + i) {
          if (crossed)
            out[s0 + p] = acc;
          else
            head = acc;
          crossed = true;
          acc = 0.f;
          ++p;
          next = p < k ? end_at(p) : 0x7fffffff;
        }
        acc += v[i];
      }
      while (next <= rel + ITEMS) {
        if (crossed)
          out[s0 + p] = acc;
        else
          head = acc;
        crossed = true;
        acc = 0.f;
        ++p;
        next = p < k ? end_at(p) : 0x7fffffff;
      }
      Scan me{acc, crossed ? 1 : 0};
      Scan inc = me;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        float ov = __shfl_up_sync(~0u, inc.v, d);
        int of = __shfl_up_sync(~0u, inc.f, d);
        if (lane >= d) inc = combine(Scan{ov, of}, inc);
      }
      float exv = __shfl_up_sync(~0u, inc.v, 1);
      int exf = __shfl_up_sync(~0u, inc.f, 1);
      Scan ex = combine(Scan{carry, 0}, lane ? Scan{exv, exf} : Scan{0.f, 0});
      bool head_piece = false;
      if (crossed) {
        float total = ex.v + head;
        long long s = s0 + p_first;
        if (p_first == 0 && !tile_crossed && offsets[s] < te0) {
          pieces[2 * t] = total;
          head_piece = true;
        } else {
          out[s] = total;
        }
      }
      // the head piece's ticket: the lane that wrote it
      if (head_piece) {
        __threadfence();
        long long s = s0, a = offsets[s] / TILE;
        if (atomicAdd(&tickets[s], 1u) == (unsigned)(t - a)) head_piece = true;
        else head_piece = false;
      }
      unsigned hb = __ballot_sync(~0u, head_piece);
      if (hb) {
        __threadfence();
        long long s = s0, a = offsets[s] / TILE;
        fold_pieces<32>(pieces, a, t, lane, &out[s]);
        if (lane == 0) tickets[s] = 0;
      }
      tile_crossed = tile_crossed || __any_sync(~0u, crossed);
      carry = __shfl_sync(~0u, combine(ex, me).v, 31);
      __syncwarp();  // the stage read before it is copied into again
    }
    cp_wait<0>();
    // the open segment at the tile's end
    const long long s = S(c1);
    if (s < count) {
      long long st0 = offsets[s];
      if (st0 < te1) {
        bool last = false;
        long long a = st0 / TILE, bb = (offsets[s + 1] - 1) / TILE;
        if (lane == 0) {
          pieces[2 * t + 1] = carry;
          __threadfence();
          last = atomicAdd(&tickets[s], 1u) == (unsigned)(bb - a);
        }
        if (__shfl_sync(~0u, (int)last, 0)) {
          __threadfence();
          fold_pieces<32>(pieces, a, bb, lane, &out[s]);
          if (lane == 0) tickets[s] = 0;
        }
      }
    }
  }
}
