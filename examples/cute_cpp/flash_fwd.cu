// FlashAttention-2 forward in CuTe C++: one 4-warp CTA per (64-row Q block, head, batch).
//
// The recipe shared with examples/cute_dsl/flash_fwd.py and examples/flash_fwd.py (docs: README,
// "Flash attention forward in CuTe C++"), written as in the CuTe flash-attention tutorial:
// MMA_Atom<SM80_16x8x16_F32F16F16F32_TN> (bf16: ..._F32BF16BF16F32_TN) tiled Layout<Shape<_4,_1,_1>> over
// Tile<_64,_16,_16> (warp w owns Q rows 16w..16w+15); shared tiles tile_to_shape(composition(Swizzle<3,3,3>,
// (8,64):(64,1)), (64,d)); global -> shared by SM80_CP_ASYNC_CACHEGLOBAL (16 bytes), K/V double-buffered
// in cp.async groups; Q and K read by SM75_U32x4_LDSM_N, V (transposed) by SM75_U16x8_LDSM_T, through the
// retile_D views of make_tiled_copy_A/B.
//
// The softmax is spelled out with the rounding intrinsics so that nvcc emits exactly the recipe's PTX
// (no FMA contraction): max.f32 and shfl.sync.bfly 2, 1 for the row max; ex2.approx.ftz.f32 (inline PTX)
// of fma.rn(s, scale_log2, -(m * scale_log2)); sub/mul/add .rn for the rescale and the row sum. The final
// 1/l and ln(l) are plain C++: div.rn.f32 and the library's logf without fast math; div.approx / rcp.approx
// and lg2.approx.ftz.f32 * ln 2 (__logf) with --use_fast_math (flash_fwd_fast_math.cu), which also makes
// every f32 operation .ftz.
//
// Kernels: flash_fwd_<f16|bf16>_d<64|128>[_causal](q, k, v, o, lse, N, scale_log2, softmax_scale)
//   q, k, v, o: [B, H, N, d] row-major in the input type; lse: [B, H, N] f32; N >= 1 (any, tails masked);
//   scale_log2 = float(1/sqrt(d)) * float(log2 e), softmax_scale = float(1/sqrt(d)), rounded on the host.
// Launch: grid (ceil(N/64), H, B), block (128,1,1), dynamic shared memory 5 * 64 * d * 2 bytes
// (Q, then K and V twice): 40960 for d=64, 81920 for d=128.
//
//   warpsim run examples/cute_cpp/flash_fwd.cu --kernel flash_fwd_f16_d64 --grid 1 --block 128 --smem 40960 \
//       --arg q=q.npy --arg k=k.npy --arg v=v.npy --arg o=zeros:f16:1x1x64x64 --arg lse=zeros:f32:1x1x64 \
//       --arg N=64 --arg scale_log2=0.1803368777036667 --arg softmax_scale=0.125 --dump o,lse --out DIR

#include <cute/tensor.hpp>

using namespace cute;

template <class T, int kHeadDim>
struct FlashTraits {
    static constexpr int kBlockM = 64;   // Q rows per CTA
    static constexpr int kBlockN = 64;   // K/V rows per tile
    using D = Int<kHeadDim>;

    using MmaOp = conditional_t<is_same_v<T, half_t>, SM80_16x8x16_F32F16F16F32_TN,
                                SM80_16x8x16_F32BF16BF16F32_TN>;
    using TiledMma = decltype(make_tiled_mma(MmaOp{}, Layout<Shape<_4, _1, _1>>{}, Tile<_64, _16, _16>{}));

    // (8,64) -> smem element: 8 rows of 64 elements, XOR-swizzled in 16-byte chunks
    using SmemLayoutAtom = decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{}));
    // (row, d) -> smem element
    using SmemLayoutQ = decltype(tile_to_shape(SmemLayoutAtom{}, Shape<_64, D>{}));
    // (key, d, stage) -> smem element: two tiles, the second right after the first
    using SmemLayoutKV = decltype(tile_to_shape(SmemLayoutAtom{}, Shape<_64, D, _2>{}));
    // (d, key, stage) -> smem element: the same bytes as SmemLayoutKV, V read transposed
    using SmemLayoutVt = decltype(composition(SmemLayoutKV{},
                                              Layout<Shape<D, _64, _2>, Stride<_64, _1, Int<64 * kHeadDim>>>{}));
    using SmemLayoutVtShape = Layout<Shape<D, _64>>;   // (d, key): only the shape, for the B fragment of P V

    // global -> shared: 16-byte cp.async (zero-filling when predicated off), 16 rows of 8 threads per step
    using GmemTiledCopy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>, T>{},
                                                   Layout<Shape<_16, _8>, Stride<_8, _1>>{},   // (16,8) -> thread
                                                   Layout<Shape<_1, _8>>{}));                  // (1,8) -> value
    using SmemCopyAtom = Copy_Atom<SM75_U32x4_LDSM_N, T>;
    using SmemCopyAtomTransposed = Copy_Atom<SM75_U16x8_LDSM_T, T>;
};

// ------------------------------------------------------------------------------------------- helpers

__device__ __forceinline__ float ex2_approx_ftz(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// two f32 -> one register of two T (lo in the low half): cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32
template <class T>
__device__ __forceinline__ uint32_t pack_rn(float lo, float hi) {
    uint32_t r;
    if constexpr (is_same_v<T, half_t>) {
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    } else {
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    }
    return r;
}

// An accumulator layout (MMA=(2,2), MMA_M, MMA_N) viewed as rows x columns: ((2, MMA_M), (2, MMA_N)).
// The C fragment of m16n8k16 holds (row g, cols 2t, 2t+1) then (row g+8, the same cols) of each 16x8 tile.
template <class Layout>
__device__ auto rowcol(Layout const& acc) {
    auto l = logical_divide(acc, Shape<_2>{});   // ((2, 2), MMA_M, MMA_N)
    return make_layout(make_layout(get<0, 1>(l), get<1>(l)), make_layout(get<0, 0>(l), get<2>(l)));
}

// An accumulator layout (MMA=4, MMA_M, MMA_N) as the A operand of the next m16n8k16: ((4, 2), MMA_M, MMA_N/2).
// Two adjacent 16x8 C tiles are one 16x16 A tile: A value v + 4h of k-block kk is C value v of tile 2kk + h.
template <class Layout>
__device__ auto c_to_a(Layout const& acc) {
    auto l = logical_divide(acc, Shape<X, X, _2>{});   // (MMA, MMA_M, (2, MMA_N/2))
    return make_layout(make_layout(get<0>(l), get<2, 0>(l)), get<1>(l), get<2, 1>(l));
}

// Rows of a (CPY, CPY_M, CPY_K) global -> shared partition: rows < rows_left copied, the others zero-filled
// (cp.async with src-size 0: nothing is read).
template <class TiledCopy, class TensorS, class TensorD, class TensorC>
__device__ void copy_rows(TiledCopy const& tiled_copy, TensorS const& src, TensorD&& dst, TensorC const& coord,
                          int rows_left) {
    CUTE_UNROLL
    for (int m = 0; m < size<1>(dst); ++m) {
        copy(tiled_copy.with(get<0>(coord(0, m, 0)) < rows_left), src(_, m, _), dst(_, m, _));
    }
}

// ------------------------------------------------------------------------------------------- the CTA

template <class T, int kHeadDim, bool kCausal>
__device__ void flash_fwd_cta(T const* q, T const* k, T const* v, T* o, float* lse, int N, float scale_log2,
                              float softmax_scale) {
    using Traits = FlashTraits<T, kHeadDim>;
    using D = typename Traits::D;
    constexpr int kBlockM = Traits::kBlockM;
    constexpr int kBlockN = Traits::kBlockN;
    extern __shared__ __align__(128) uint8_t smem[];
    int const tid = threadIdx.x;
    int const block_m = blockIdx.x;
    int const head = blockIdx.y;
    int const batch = blockIdx.z;
    int const heads = gridDim.y;

    // (N, d) of this (batch, head) -> global element; tiles of 64 rows
    auto head_layout = make_layout(make_shape(N, D{}), make_stride(D{}, _1{}));
    int const head_offset = (batch * heads + head) * N * kHeadDim;
    Tensor gQ = local_tile(make_tensor(make_gmem_ptr(q + head_offset), head_layout), Shape<_64, D>{},
                           make_coord(block_m, 0));                                     // (64, d)
    Tensor gK = local_tile(make_tensor(make_gmem_ptr(k + head_offset), head_layout), Shape<_64, D>{},
                           make_coord(_, 0));                                           // (64, d, n_tiles)
    Tensor gV = local_tile(make_tensor(make_gmem_ptr(v + head_offset), head_layout), Shape<_64, D>{},
                           make_coord(_, 0));                                           // (64, d, n_tiles)
    Tensor gO = local_tile(make_tensor(make_gmem_ptr(o + head_offset), head_layout), Shape<_64, D>{},
                           make_coord(block_m, 0));                                     // (64, d)
    float* lse_head = lse + (batch * heads + head) * N;

    T* smem_q = reinterpret_cast<T*>(smem);
    T* smem_k = smem_q + kBlockM * kHeadDim;
    T* smem_v = smem_k + 2 * kBlockN * kHeadDim;
    Tensor sQ = make_tensor(make_smem_ptr(smem_q), typename Traits::SmemLayoutQ{});     // (64, d)
    Tensor sK = make_tensor(make_smem_ptr(smem_k), typename Traits::SmemLayoutKV{});    // (64, d, 2)
    Tensor sV = make_tensor(make_smem_ptr(smem_v), typename Traits::SmemLayoutKV{});    // (64, d, 2)
    Tensor sVt = make_tensor(make_smem_ptr(smem_v), typename Traits::SmemLayoutVt{});   // (d, 64, 2)

    // global -> shared, rows >= N zero-filled
    typename Traits::GmemTiledCopy gmem_tiled_copy;
    auto gmem_thr_copy = gmem_tiled_copy.get_slice(tid);
    Tensor tQgQ = gmem_thr_copy.partition_S(gQ);              // (CPY, CPY_M, CPY_K)
    Tensor tQsQ = gmem_thr_copy.partition_D(sQ);
    Tensor tKgK = gmem_thr_copy.partition_S(gK);              // (CPY, CPY_N, CPY_K, n_tiles)
    Tensor tKsK = gmem_thr_copy.partition_D(sK);              // (CPY, CPY_N, CPY_K, 2)
    Tensor tVgV = gmem_thr_copy.partition_S(gV);
    Tensor tVsV = gmem_thr_copy.partition_D(sV);
    Tensor tQcQ = gmem_thr_copy.partition_S(make_identity_tensor(Shape<_64, D>{}));   // (row, col) in a tile
    int const q_rows_left = N - block_m * kBlockM;

    int n_tiles = ceil_div(N, kBlockN);
    if constexpr (kCausal) {
        n_tiles = min(n_tiles, block_m + 1);   // tiles whose first column <= the block's last row
    }
    auto load_kv = [&](int tile) {
        int const rows_left = N - tile * kBlockN;
        copy_rows(gmem_tiled_copy, tKgK(_, _, _, tile), tKsK(_, _, _, tile % 2), tQcQ, rows_left);
        copy_rows(gmem_tiled_copy, tVgV(_, _, _, tile), tVsV(_, _, _, tile % 2), tQcQ, rows_left);
        cp_async_fence();
    };
    copy_rows(gmem_tiled_copy, tQgQ, tQsQ, tQcQ, q_rows_left);
    cp_async_fence();
    load_kv(0);

    // shared -> registers through the MMA's fragments
    typename Traits::TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_slice(tid);
    Tensor tSrQ = thr_mma.partition_fragment_A(sQ);                             // (MMA, MMA_M, MMA_K)
    Tensor tSrK = thr_mma.partition_fragment_B(sK(_, _, 0));                    // (MMA, MMA_N, MMA_K)
    Tensor tOrVt = thr_mma.partition_fragment_B(
        make_tensor(make_smem_ptr(smem_v), typename Traits::SmemLayoutVtShape{}));   // (MMA, MMA_N, MMA_K)
    Tensor acc_o = partition_fragment_C(tiled_mma, Shape<_64, D>{});            // (MMA, MMA_M, MMA_N) f32
    clear(acc_o);

    auto smem_tiled_copy_Q = make_tiled_copy_A(typename Traits::SmemCopyAtom{}, tiled_mma);
    auto smem_thr_copy_Q = smem_tiled_copy_Q.get_slice(tid);
    Tensor tSsQ = smem_thr_copy_Q.partition_S(sQ);
    Tensor tSrQ_view = smem_thr_copy_Q.retile_D(tSrQ);
    auto smem_tiled_copy_K = make_tiled_copy_B(typename Traits::SmemCopyAtom{}, tiled_mma);
    auto smem_thr_copy_K = smem_tiled_copy_K.get_slice(tid);
    Tensor tSsK = smem_thr_copy_K.partition_S(sK);                               // (CPY, CPY_N, CPY_K, 2)
    Tensor tSrK_view = smem_thr_copy_K.retile_D(tSrK);
    auto smem_tiled_copy_V = make_tiled_copy_B(typename Traits::SmemCopyAtomTransposed{}, tiled_mma);
    auto smem_thr_copy_V = smem_tiled_copy_V.get_slice(tid);
    Tensor tOsVt = smem_thr_copy_V.partition_S(sVt);                             // (CPY, CPY_N, CPY_K, 2)
    Tensor tOrVt_view = smem_thr_copy_V.retile_D(tOrVt);

    // (row, col) in the 64x64 tile of each S element this thread holds, as rows x columns
    Tensor cS = thr_mma.partition_C(make_identity_tensor(Shape<_64, _64>{}));   // (MMA, MMA_M, MMA_N)
    Tensor tScS = make_tensor(cS.data(), rowcol(cS.layout()));
    constexpr int kRows = 2 * size<1>(decltype(acc_o){});   // rows per thread: g and g + 8
    float row_max[kRows];
    float row_sum[kRows];
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
        row_max[r] = -INFINITY;
        row_sum[r] = 0.f;
    }

    cp_async_wait<1>();          // Q has landed (K/V tile 0 may still be in flight)
    __syncthreads();
    copy(smem_tiled_copy_Q, tSsQ, tSrQ_view);

    for (int j = 0; j < n_tiles; ++j) {
        int const stage = j % 2;
        if (j + 1 < n_tiles) {
            load_kv(j + 1);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();

        // S = Q K^T
        Tensor acc_s = partition_fragment_C(tiled_mma, Shape<_64, _64>{});    // (MMA, MMA_M, MMA_N) f32
        clear(acc_s);
        copy(smem_tiled_copy_K, tSsK(_, _, _0{}, stage), tSrK_view(_, _, _0{}));
        CUTE_UNROLL
        for (int kk = 0; kk < size<2>(tSrQ); ++kk) {
            if (kk + 1 < size<2>(tSrQ)) {
                copy(smem_tiled_copy_K, tSsK(_, _, kk + 1, stage), tSrK_view(_, _, kk + 1));
            }
            cute::gemm(tiled_mma, tSrQ(_, _, kk), tSrK(_, _, kk), acc_s);
        }

        Tensor s = make_tensor(acc_s.data(), rowcol(acc_s.layout()));          // (rows, cols)
        Tensor o_rows = make_tensor(acc_o.data(), rowcol(acc_o.layout()));     // (rows, d cols)

        // mask: -inf at column >= N and, causal, at column > row (only the last tile has such columns)
        bool const tail = (j + 1) * kBlockN > N;
        bool const diagonal = kCausal && j == block_m;
        if (tail || diagonal) {
            CUTE_UNROLL
            for (int r = 0; r < size<0>(s); ++r) {
                CUTE_UNROLL
                for (int c = 0; c < size<1>(s); ++c) {
                    int const row = block_m * kBlockM + get<0>(tScS(r, c));
                    int const col = j * kBlockN + get<1>(tScS(r, c));
                    if (col >= N || (kCausal && col > row)) {
                        s(r, c) = -INFINITY;
                    }
                }
            }
        }

        // online softmax, row by row
        CUTE_UNROLL
        for (int r = 0; r < size<0>(s); ++r) {
            float const m_old = row_max[r];
            float m_new = m_old;
            CUTE_UNROLL
            for (int c = 0; c < size<1>(s); ++c) {
                m_new = fmaxf(m_new, s(r, c));
            }
            m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 2));
            m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 1));
            row_max[r] = m_new;
            float const m_use = m_new == -INFINITY ? 0.f : m_new;
            float const alpha = ex2_approx_ftz(__fmul_rn(__fsub_rn(m_old, m_use), scale_log2));
            row_sum[r] = __fmul_rn(row_sum[r], alpha);
            CUTE_UNROLL
            for (int c = 0; c < size<1>(o_rows); ++c) {
                o_rows(r, c) = __fmul_rn(o_rows(r, c), alpha);
            }
            float const neg_max_scaled = -__fmul_rn(m_use, scale_log2);
            CUTE_UNROLL
            for (int c = 0; c < size<1>(s); ++c) {
                s(r, c) = ex2_approx_ftz(__fmaf_rn(s(r, c), scale_log2, neg_max_scaled));
                row_sum[r] = __fadd_rn(row_sum[r], s(r, c));
            }
        }

        // P in T, re-laid out as the A operand; O += P V
        Tensor p = make_tensor<T>(acc_s.layout());
        Tensor p_bits = recast<uint32_t>(p);
        CUTE_UNROLL
        for (int i = 0; i < size(acc_s); i += 2) {
            p_bits(i / 2) = pack_rn<T>(acc_s(i), acc_s(i + 1));
        }
        Tensor tOrP = make_tensor(p.data(), c_to_a(p.layout()));               // (MMA, MMA_M, MMA_K)
        copy(smem_tiled_copy_V, tOsVt(_, _, _0{}, stage), tOrVt_view(_, _, _0{}));
        CUTE_UNROLL
        for (int kk = 0; kk < size<2>(tOrP); ++kk) {
            if (kk + 1 < size<2>(tOrP)) {
                copy(smem_tiled_copy_V, tOsVt(_, _, kk + 1, stage), tOrVt_view(_, _, kk + 1));
            }
            cute::gemm(tiled_mma, tOrP(_, _, kk), tOrVt(_, _, kk), acc_o);
        }
        __syncthreads();         // every warp is done with this stage before it is loaded again
    }

    // O = acc_o / l in T; LSE = m * softmax_scale + ln l; rows >= N not stored
    Tensor o_rows = make_tensor(acc_o.data(), rowcol(acc_o.layout()));           // (rows, d cols)
    Tensor out = make_tensor<T>(acc_o.layout());
    Tensor out_bits = recast<uint32_t>(out);
    Tensor out_rows = make_tensor(out.data(), rowcol(out.layout()));
    Tensor tOgO = thr_mma.partition_C(gO);
    Tensor g_rows = make_tensor(tOgO.data(), rowcol(tOgO.layout()));             // (rows, d cols) in global
    CUTE_UNROLL
    for (int r = 0; r < size<0>(o_rows); ++r) {
        float l = row_sum[r];
        l = __fadd_rn(l, __shfl_xor_sync(0xffffffffu, l, 2));
        l = __fadd_rn(l, __shfl_xor_sync(0xffffffffu, l, 1));
        bool const empty = l == 0.f || l != l;
        float const inv = empty ? 1.f : 1.f / l;
        CUTE_UNROLL
        for (int c = 0; c < size<1>(o_rows); ++c) {
            o_rows(r, c) = __fmul_rn(o_rows(r, c), inv);
        }
        float const row_lse = empty ? INFINITY : __fadd_rn(__fmul_rn(row_max[r], softmax_scale), logf(l));
        int const row = get<0>(tScS(r, 0));
        if (row < q_rows_left) {
            if (get<1>(tScS(r, 0)) == 0) {
                lse_head[block_m * kBlockM + row] = row_lse;
            }
        }
    }
    CUTE_UNROLL
    for (int i = 0; i < size(acc_o); i += 2) {
        out_bits(i / 2) = pack_rn<T>(acc_o(i), acc_o(i + 1));
    }
    CUTE_UNROLL
    for (int r = 0; r < size<0>(out_rows); ++r) {
        if (get<0>(tScS(r, 0)) < q_rows_left) {
            copy(AutoVectorizingCopyWithAssumedAlignment<32>{}, out_rows(r, _), g_rows(r, _));
        }
    }
}

// The eight kernels, written out so that their parameter names are in the source.

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_f16_d64(half_t const* q, half_t const* k, half_t const* v, half_t* o,
        float* lse, int N, float scale_log2, float softmax_scale) {
    flash_fwd_cta<half_t, 64, false>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_f16_d64_causal(half_t const* q, half_t const* k, half_t const* v, half_t* o,
        float* lse, int N, float scale_log2, float softmax_scale) {
    flash_fwd_cta<half_t, 64, true>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_f16_d128(half_t const* q, half_t const* k, half_t const* v, half_t* o,
        float* lse, int N, float scale_log2, float softmax_scale) {
    flash_fwd_cta<half_t, 128, false>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_f16_d128_causal(half_t const* q, half_t const* k, half_t const* v, half_t* o,
        float* lse, int N, float scale_log2, float softmax_scale) {
    flash_fwd_cta<half_t, 128, true>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_bf16_d64(bfloat16_t const* q, bfloat16_t const* k, bfloat16_t const* v, bfloat16_t* o,
        float* lse, int N, float scale_log2, float softmax_scale) {
    flash_fwd_cta<bfloat16_t, 64, false>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_bf16_d64_causal(bfloat16_t const* q, bfloat16_t const* k, bfloat16_t const* v, bfloat16_t* o,
        float* lse, int N, float scale_log2, float softmax_scale) {
    flash_fwd_cta<bfloat16_t, 64, true>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_bf16_d128(bfloat16_t const* q, bfloat16_t const* k, bfloat16_t const* v, bfloat16_t* o,
        float* lse, int N, float scale_log2, float softmax_scale) {
    flash_fwd_cta<bfloat16_t, 128, false>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_bf16_d128_causal(bfloat16_t const* q, bfloat16_t const* k, bfloat16_t const* v, bfloat16_t* o,
        float* lse, int N, float scale_log2, float softmax_scale) {
    flash_fwd_cta<bfloat16_t, 128, true>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}
