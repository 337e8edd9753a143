// Element-balanced segmented f32 sum (prototype): each block a fixed tile of BLOCK*ITEMS
// elements; each thread ITEMS contiguous elements, walked in order against the tile's
// segment ends (a merge of the ends with the elements); a block's segmented scan joins
// the threads' open runs; segments across tiles leave pieces (two slots a tile) that the
// last-arriving tile folds in tile order (a ticket per segment).
#pragma once

struct Scan {
  float v;
  int f;
};
__device__ __forceinline__ Scan combine(Scan l, Scan r) { return Scan{r.f ? r.v : l.v + r.v, l.f | r.f}; }

// tile_seg[t]: the segments whose end is at most t*tile (t >= 1); 0 for t = 0, count for t = tiles
__global__ void tile_index(const long long* offsets, long long count, long long tile, long long tiles,
                           long long* tile_seg) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t > tiles) return;
  if (t == 0) {
    tile_seg[0] = 0;
    return;
  }
  if (t == tiles) {
    tile_seg[t] = count;
    return;
  }
  long long e0 = t * tile, lo = 0, hi = count;
  while (lo < hi) {
    long long mid = (lo + hi) >> 1;
    if (offsets[mid + 1] <= e0)
      lo = mid + 1;
    else
      hi = mid;
  }
  tile_seg[t] = lo;
}

template <int BLOCK>
__device__ __forceinline__ void fold_pieces(const float* pieces, long long a, long long b, int lane, float* out) {
  // pieces 2a+1, 2(a+1)+1, ..., 2(b-1)+1, then 2b; lane-strided, then the warp's tree
  float sum = 0.f;
  for (long long u = a + lane; u <= b; u += 32) sum += __ldcg(&pieces[u == b ? 2 * b : 2 * u + 1]);
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) sum += __shfl_xor_sync(~0u, sum, d);
  if (lane == 0) *out = sum;
}

// MODE 0: the segmented sum. MODE 1: the same loads (elements and ends) and as many
// writes of results, no segment logic: the ceiling of this traffic.
// LOAD 0: each thread loads its ITEMS as ITEMS/4 16-byte vectors; LOAD 1: the block loads
// the tile coalesced into shared memory (swizzled), each thread reads its ITEMS back.
template <int BLOCK, int ITEMS, int LOAD, int MODE>
__global__ __launch_bounds__(BLOCK) void seg_merge(const float* __restrict__ x, long long n,
                                                   const long long* __restrict__ offsets, long long count,
                                                   const long long* __restrict__ tile_seg, float* __restrict__ out,
                                                   float* __restrict__ pieces, unsigned* __restrict__ tickets) {
  constexpr int TILE = BLOCK * ITEMS;
  constexpr int VECS = ITEMS / 4;
  constexpr int CAP = 2048;
  constexpr int WARPS = BLOCK / 32;
  __shared__ int ends[CAP];
  __shared__ Scan warp_total[WARPS];
  __shared__ long long fold_s[2], fold_a[2], fold_b[2];
  extern __shared__ float4 stage[];
  const int j = threadIdx.x, lane = j & 31, w = j >> 5;
  const long long t = blockIdx.x;
  const long long e0 = t * TILE;
  const int len = (int)min((long long)TILE, n - e0);
  const long long S0 = tile_seg[t], S1 = tile_seg[t + 1];
  const int k = (int)(S1 - S0);
  if (j < 2) fold_s[j] = -1;
  float v[ITEMS];
  if (LOAD == 0) {
    if (len == TILE) {
      const float4* p = reinterpret_cast<const float4*>(x + e0) + j * VECS;
#pragma unroll
      for (int q = 0; q < VECS; ++q) {
        float4 a = p[q];
        v[4 * q] = a.x;
        v[4 * q + 1] = a.y;
        v[4 * q + 2] = a.z;
        v[4 * q + 3] = a.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) {
        int r = j * ITEMS + i;
        v[i] = r < len ? x[e0 + r] : 0.f;
      }
    }
  } else {
    if (len == TILE) {
      const float4* p = reinterpret_cast<const float4*>(x + e0);
      float4 a[VECS];
#pragma unroll
      for (int q = 0; q < VECS; ++q) a[q] = p[q * BLOCK + j];
#pragma unroll
      for (int q = 0; q < VECS; ++q) {
        int l = q * BLOCK + j;
        stage[l ^ ((l >> 3) & 3)] = a[q];
      }
    } else {
      for (int l = j; l < TILE / 4; l += BLOCK) {
        float4 a;
        int r = 4 * l;
        a.x = r < len ? x[e0 + r] : 0.f;
        a.y = r + 1 < len ? x[e0 + r + 1] : 0.f;
        a.z = r + 2 < len ? x[e0 + r + 2] : 0.f;
        a.w = r + 3 < len ? x[e0 + r + 3] : 0.f;
        stage[l ^ ((l >> 3) & 3)] = a;
      }
    }
  }
  const bool in_shared = k <= CAP;
  if (in_shared)
    for (int i = j; i < k; i += BLOCK) ends[i] = (int)(offsets[S0 + i + 1] - e0);
  __syncthreads();
  if (LOAD == 1) {
#pragma unroll
    for (int q = 0; q < VECS; ++q) {
      int l = VECS * j + q;
      float4 a = stage[l ^ ((l >> 3) & 3)];
      v[4 * q] = a.x;
      v[4 * q + 1] = a.y;
      v[4 * q + 2] = a.z;
      v[4 * q + 3] = a.w;
    }
  }
  auto end_at = [&](int p) -> int { return in_shared ? ends[p] : (int)(offsets[S0 + p + 1] - e0); };
  float acc = 0.f;
  if (MODE == 1) {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) acc += v[i];
    for (int i = j; i < k; i += BLOCK) out[S0 + i] = acc + (float)end_at(i);
    return;
  }
  const int rel = j * ITEMS;
  int p = 0;
  if (j > 0) {
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
  float head = 0.f;
  bool crossed = false;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    while (next <= rel + i) {
      if (crossed)
        out[S0 + p] = acc;
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
      out[S0 + p] = acc;
    else
      head = acc;
    crossed = true;
    acc = 0.f;
    ++p;
    next = p < k ? end_at(p) : 0x7fffffff;
  }
  // the block's segmented scan of the threads' open runs
  Scan me{acc, crossed ? 1 : 0};
  Scan inc = me;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    float ov = __shfl_up_sync(~0u, inc.v, d);
    int of = __shfl_up_sync(~0u, inc.f, d);
    if (lane >= d) inc = combine(Scan{ov, of}, inc);
  }
  if (lane == 31) warp_total[w] = inc;
  float exv = __shfl_up_sync(~0u, inc.v, 1);
  int exf = __shfl_up_sync(~0u, inc.f, 1);
  Scan ex = lane ? Scan{exv, exf} : Scan{0.f, 0};
  __syncthreads();
  if (w > 0) {
    Scan pre = warp_total[0];
    for (int u = 1; u < w; ++u) pre = combine(pre, warp_total[u]);
    ex = combine(pre, ex);
  }
  if (crossed) {
    float total = ex.v + head;
    if (p_first == 0 && offsets[S0] < e0) {  // the tile's piece of a segment from earlier tiles
      pieces[2 * t] = total;
      __threadfence();
      long long a = offsets[S0] / TILE;
      if (atomicAdd(&tickets[S0], 1u) == (unsigned)(t - a)) {
        __threadfence();
        fold_s[0] = S0;
        fold_a[0] = a;
        fold_b[0] = t;
      }
    } else {
      out[S0 + p_first] = total;
    }
  }
  if (j == BLOCK - 1 && S1 < count) {
    long long st = offsets[S1];
    if (st < e0 + len) {  // the open segment has elements here: its piece
      pieces[2 * t + 1] = combine(ex, me).v;
      __threadfence();
      long long a = st / TILE, b = (offsets[S1 + 1] - 1) / TILE;
      if (atomicAdd(&tickets[S1], 1u) == (unsigned)(b - a)) {
        __threadfence();
        fold_s[1] = S1;
        fold_a[1] = a;
        fold_b[1] = b;
      }
    }
  }
  __syncthreads();
  if (w == 0) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      long long s = fold_s[c];
      if (s >= 0) {
        __threadfence();
        fold_pieces<BLOCK>(pieces, fold_a[c], fold_b[c], lane, &out[s]);
        if (lane == 0) tickets[s] = 0;
      }
    }
  }
}
