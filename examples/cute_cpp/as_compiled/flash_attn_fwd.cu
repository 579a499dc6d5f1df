// FlashAttention-2 forward, f16, head dim 64, written as CuTe users write it and compiled with nvcc's DEFAULTS.
//
// O = softmax(Q K^T * softmax_scale [+ causal mask]) V and LSE = log(sum exp(...)) per query row, for
// q, k, v, o: [B, H, N, 64] half (row-major), lse: [B, H, N] float, N >= 1 (tails masked).
// One CTA of 4 warps per (64-row query tile, head, batch); warp w owns query rows 16w..16w+15.
// - TiledMMA: SM80_16x8x16_F32F16F16F32_TN tiled Layout<Shape<_4,_1,_1>> over Tile<_64,_16,_16>;
// - Q, K, V through shared memory (Swizzle<3,3,3> over (8,64) rows), global -> shared by 16-byte cp.async
//   (zero-filled past N), K/V double-buffered; Q, K by ldmatrix (SM75_U32x4_LDSM_N), V transposed (SM75_U16x8_LDSM_T);
// - online softmax as in the FA2 code: row max by warp shuffles, p = exp2f(s * scale_log2 - max * scale_log2),
//   row sums, O and the sum rescaled by exp2f((max_old - max_new) * scale_log2); P converted to half_t for P V.
//
// Compiled with nvcc's default flags ON PURPOSE (no rounding intrinsics, no -fmad=false, no flags line): the
// PTX is what a user's build gets, so mul+add pairs may be contracted into FMAs by nvcc and by ptxas.
// examples/cute_cpp/flash_fwd.cu is the same recipe spelled with __fmul_rn/__fadd_rn for bit-exact PTX.
//
// Kernels: flash_fwd_f16_d64, flash_fwd_f16_d64_causal (q, k, v, o, lse, N, scale_log2, softmax_scale)
//   softmax_scale = 1/sqrt(64), scale_log2 = softmax_scale * log2(e), both as f32.
// Launch: grid (ceil(N/64), H, B), block 128, dynamic shared memory 40960 bytes (Q, 2 x K, 2 x V).
//
//   warpsim run examples/cute_cpp/as_compiled/flash_attn_fwd.cu --kernel flash_fwd_f16_d64_causal --grid 2,1,1 \
//       --block 128 --smem 40960 --arg q=q.npy --arg k=k.npy --arg v=v.npy --arg o=zeros:f16:1x1x128x64 \
//       --arg lse=zeros:f32:1x1x128 --arg N=128 --arg scale_log2=0.18033688 --arg softmax_scale=0.125

#include <cute/tensor.hpp>

using namespace cute;

namespace {

using Element = half_t;

using TiledMma = decltype(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_4, _1, _1>>{},
                                         Tile<_64, _16, _16>{}));
using SmemLayoutAtom = decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{}));
using SmemLayoutQ = decltype(tile_to_shape(SmemLayoutAtom{}, Shape<_64, _64>{}));
using SmemLayoutKV = decltype(tile_to_shape(SmemLayoutAtom{}, Shape<_64, _64, _2>{}));        // (key, d, stage)
using SmemLayoutVt = decltype(composition(SmemLayoutKV{},                                      // (d, key, stage)
                                          Layout<Shape<_64, _64, _2>, Stride<_64, _1, Int<64 * 64>>>{}));
using GmemTiledCopy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>, Element>{},
                                               Layout<Shape<_16, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _8>>{}));

// butterfly over the 4 lanes that share a row of the accumulator
template <class Op>
__device__ float quad_allreduce(float x, Op op) {
    x = op(x, __shfl_xor_sync(0xffffffff, x, 2));
    x = op(x, __shfl_xor_sync(0xffffffff, x, 1));
    return x;
}

// (MMA=(2,2), MMA_M, MMA_N) accumulator viewed as (rows, cols) = ((2, MMA_M), (2, MMA_N))
template <class Layout>
__device__ auto convert_layout_acc_rowcol(Layout const& acc) {
    auto l = logical_divide(acc, Shape<_2>{});
    return make_layout(make_layout(get<0, 1>(l), get<1>(l)), make_layout(get<0, 0>(l), get<2>(l)));
}

// (MMA=4, MMA_M, MMA_N) accumulator viewed as the A operand of the next m16n8k16: ((4, 2), MMA_M, MMA_N / 2)
template <class Layout>
__device__ auto convert_layout_acc_Aregs(Layout const& acc) {
    auto l = logical_divide(acc, Shape<X, X, _2>{});
    return make_layout(make_layout(get<0>(l), get<2, 0>(l)), get<1>(l), get<2, 1>(l));
}

// global -> shared of a (CPY, CPY_M, CPY_K) partition, rows at or past max_rows zero-filled
template <class TiledCopy, class S, class D, class C>
__device__ void copy_rows(TiledCopy const& tiled_copy, S const& src, D&& dst, C const& identity, int max_rows) {
    CUTE_UNROLL
    for (int m = 0; m < size<1>(dst); ++m) {
        copy(tiled_copy.with(get<0>(identity(0, m, 0)) < max_rows), src(_, m, _), dst(_, m, _));
    }
}

template <bool kIsCausal>
__device__ void flash_fwd(Element const* q, Element const* k, Element const* v, Element* o, float* lse, int N,
                          float scale_log2, float softmax_scale) {
    constexpr int kBlockM = 64;    // query rows per CTA
    constexpr int kBlockN = 64;    // key rows per K/V tile
    constexpr int kHeadDim = 64;
    extern __shared__ __align__(128) uint8_t smem[];
    int const tidx = threadIdx.x;
    int const m_block = blockIdx.x;
    int const bidh = blockIdx.y;
    int const bidb = blockIdx.z;

    auto head_layout = make_layout(make_shape(N, Int<kHeadDim>{}), make_stride(Int<kHeadDim>{}, _1{}));
    int const head_offset = (bidb * gridDim.y + bidh) * N * kHeadDim;
    auto tile = Shape<Int<kBlockM>, Int<kHeadDim>>{};
    Tensor gQ = local_tile(make_tensor(make_gmem_ptr(q + head_offset), head_layout), tile, make_coord(m_block, 0));
    Tensor gK = local_tile(make_tensor(make_gmem_ptr(k + head_offset), head_layout), tile, make_coord(_, 0));
    Tensor gV = local_tile(make_tensor(make_gmem_ptr(v + head_offset), head_layout), tile, make_coord(_, 0));
    Tensor gO = local_tile(make_tensor(make_gmem_ptr(o + head_offset), head_layout), tile, make_coord(m_block, 0));

    Element* smem_q = reinterpret_cast<Element*>(smem);
    Tensor sQ = make_tensor(make_smem_ptr(smem_q), SmemLayoutQ{});                                // (64, 64)
    Tensor sK = make_tensor(make_smem_ptr(smem_q + size(sQ)), SmemLayoutKV{});                    // (64, 64, 2)
    Tensor sV = make_tensor(sK.data() + size(sK), SmemLayoutKV{});                                // (64, 64, 2)
    Tensor sVt = make_tensor(sV.data(), SmemLayoutVt{});                                          // (64, 64, 2)

    GmemTiledCopy gmem_tiled_copy;
    auto gmem_thr_copy = gmem_tiled_copy.get_thread_slice(tidx);
    Tensor tQgQ = gmem_thr_copy.partition_S(gQ);
    Tensor tQsQ = gmem_thr_copy.partition_D(sQ);
    Tensor tKgK = gmem_thr_copy.partition_S(gK);                 // (CPY, CPY_N, CPY_K, n_blocks)
    Tensor tKsK = gmem_thr_copy.partition_D(sK);                 // (CPY, CPY_N, CPY_K, 2)
    Tensor tVgV = gmem_thr_copy.partition_S(gV);
    Tensor tVsV = gmem_thr_copy.partition_D(sV);
    Tensor tQcQ = gmem_thr_copy.partition_S(make_identity_tensor(tile));

    int n_block_max = ceil_div(N, kBlockN);
    if (kIsCausal) {
        n_block_max = min(n_block_max, ceil_div((m_block + 1) * kBlockM, kBlockN));
    }
    auto load_kv = [&](int n_block) {
        copy_rows(gmem_tiled_copy, tKgK(_, _, _, n_block), tKsK(_, _, _, n_block % 2), tQcQ, N - n_block * kBlockN);
        copy_rows(gmem_tiled_copy, tVgV(_, _, _, n_block), tVsV(_, _, _, n_block % 2), tQcQ, N - n_block * kBlockN);
        cp_async_fence();
    };
    copy_rows(gmem_tiled_copy, tQgQ, tQsQ, tQcQ, N - m_block * kBlockM);
    cp_async_fence();
    load_kv(0);

    TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_thread_slice(tidx);
    Tensor tSrQ = thr_mma.partition_fragment_A(sQ);                                   // (MMA, MMA_M, MMA_K)
    Tensor tSrK = thr_mma.partition_fragment_B(sK(_, _, 0));                          // (MMA, MMA_N, MMA_K)
    Tensor tOrVt = thr_mma.partition_fragment_B(sVt(_, _, 0));                        // (MMA, MMA_N, MMA_K)
    Tensor acc_o = partition_fragment_C(tiled_mma, tile);                             // (MMA, MMA_M, MMA_N)
    clear(acc_o);

    auto smem_tiled_copy_Q = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, Element>{}, tiled_mma);
    auto smem_thr_copy_Q = smem_tiled_copy_Q.get_thread_slice(tidx);
    Tensor tSsQ = smem_thr_copy_Q.partition_S(sQ);
    Tensor tSrQ_copy_view = smem_thr_copy_Q.retile_D(tSrQ);
    auto smem_tiled_copy_K = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, Element>{}, tiled_mma);
    auto smem_thr_copy_K = smem_tiled_copy_K.get_thread_slice(tidx);
    Tensor tSsK = smem_thr_copy_K.partition_S(sK);
    Tensor tSrK_copy_view = smem_thr_copy_K.retile_D(tSrK);
    auto smem_tiled_copy_V = make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, Element>{}, tiled_mma);
    auto smem_thr_copy_V = smem_tiled_copy_V.get_thread_slice(tidx);
    Tensor tOsVt = smem_thr_copy_V.partition_S(sVt);
    Tensor tOrVt_copy_view = smem_thr_copy_V.retile_D(tOrVt);

    // (row, col) inside the 64x64 S tile of each accumulator element this thread holds
    Tensor cS = thr_mma.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));
    Tensor tScS = make_tensor(cS.data(), convert_layout_acc_rowcol(cS.layout()));
    constexpr int kNRows = 2 * size<1>(decltype(acc_o){});
    float row_max[kNRows];
    float row_sum[kNRows];
    CUTE_UNROLL
    for (int mi = 0; mi < kNRows; ++mi) {
        row_max[mi] = -INFINITY;
        row_sum[mi] = 0.f;
    }

    cp_async_wait<1>();
    __syncthreads();
    copy(smem_tiled_copy_Q, tSsQ, tSrQ_copy_view);

    for (int n_block = 0; n_block < n_block_max; ++n_block) {
        int const stage = n_block % 2;
        if (n_block + 1 < n_block_max) {
            load_kv(n_block + 1);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();

        // S = Q K^T
        Tensor acc_s = partition_fragment_C(tiled_mma, Shape<Int<kBlockM>, Int<kBlockN>>{});
        clear(acc_s);
        CUTE_UNROLL
        for (int i = 0; i < size<2>(tSrQ); ++i) {
            copy(smem_tiled_copy_K, tSsK(_, _, i, stage), tSrK_copy_view(_, _, i));
            cute::gemm(tiled_mma, tSrQ(_, _, i), tSrK(_, _, i), acc_s);
        }

        Tensor scores = make_tensor(acc_s.data(), convert_layout_acc_rowcol(acc_s.layout()));
        if ((n_block + 1) * kBlockN > N || (kIsCausal && n_block == n_block_max - 1)) {
            CUTE_UNROLL
            for (int mi = 0; mi < size<0>(scores); ++mi) {
                CUTE_UNROLL
                for (int ni = 0; ni < size<1>(scores); ++ni) {
                    int const row = m_block * kBlockM + get<0>(tScS(mi, ni));
                    int const col = n_block * kBlockN + get<1>(tScS(mi, ni));
                    if (col >= N || (kIsCausal && col > row)) {
                        scores(mi, ni) = -INFINITY;
                    }
                }
            }
        }

        // online softmax
        Tensor acc_o_rowcol = make_tensor(acc_o.data(), convert_layout_acc_rowcol(acc_o.layout()));
        CUTE_UNROLL
        for (int mi = 0; mi < size<0>(scores); ++mi) {
            float const max_prev = row_max[mi];
            float max_cur = max_prev;
            CUTE_UNROLL
            for (int ni = 0; ni < size<1>(scores); ++ni) {
                max_cur = fmaxf(max_cur, scores(mi, ni));
            }
            max_cur = quad_allreduce(max_cur, [](float a, float b) { return fmaxf(a, b); });
            row_max[mi] = max_cur;
            // a row with no key yet keeps max -inf: use 0 so that exp2f gives 0, not NaN
            float const max_cur_finite = max_cur == -INFINITY ? 0.f : max_cur;
            float const scores_scale = exp2f((max_prev - max_cur_finite) * scale_log2);
            float const max_scaled = max_cur_finite * scale_log2;
            row_sum[mi] *= scores_scale;
            CUTE_UNROLL
            for (int ni = 0; ni < size<1>(acc_o_rowcol); ++ni) {
                acc_o_rowcol(mi, ni) *= scores_scale;
            }
            CUTE_UNROLL
            for (int ni = 0; ni < size<1>(scores); ++ni) {
                scores(mi, ni) = exp2f(scores(mi, ni) * scale_log2 - max_scaled);
                row_sum[mi] += scores(mi, ni);
            }
        }

        // O += P V, P in half_t laid out as the A operand
        Tensor rP = make_tensor<Element>(acc_s.layout());
        CUTE_UNROLL
        for (int i = 0; i < size(acc_s); ++i) {
            rP(i) = static_cast<Element>(acc_s(i));
        }
        Tensor tOrP = make_tensor(rP.data(), convert_layout_acc_Aregs(rP.layout()));
        CUTE_UNROLL
        for (int i = 0; i < size<2>(tOrP); ++i) {
            copy(smem_tiled_copy_V, tOsVt(_, _, i, stage), tOrVt_copy_view(_, _, i));
            cute::gemm(tiled_mma, tOrP(_, _, i), tOrVt(_, _, i), acc_o);
        }
        __syncthreads();     // this stage is read by every warp before the next load overwrites it
    }

    // O = acc_o / row_sum, LSE = max * softmax_scale + log(row_sum)
    Tensor acc_o_rowcol = make_tensor(acc_o.data(), convert_layout_acc_rowcol(acc_o.layout()));
    int const rows_left = N - m_block * kBlockM;
    CUTE_UNROLL
    for (int mi = 0; mi < size<0>(acc_o_rowcol); ++mi) {
        float const sum = quad_allreduce(row_sum[mi], [](float a, float b) { return a + b; });
        bool const empty = sum == 0.f || sum != sum;
        float const inv_sum = empty ? 1.f : 1.f / sum;
        CUTE_UNROLL
        for (int ni = 0; ni < size<1>(acc_o_rowcol); ++ni) {
            acc_o_rowcol(mi, ni) *= inv_sum;
        }
        int const row = get<0>(tScS(mi, 0));
        if (row < rows_left && get<1>(tScS(mi, 0)) == 0) {
            lse[(bidb * gridDim.y + bidh) * N + m_block * kBlockM + row] =
                empty ? INFINITY : row_max[mi] * softmax_scale + logf(sum);
        }
    }
    Tensor rO = make_tensor<Element>(acc_o.layout());
    CUTE_UNROLL
    for (int i = 0; i < size(acc_o); ++i) {
        rO(i) = static_cast<Element>(acc_o(i));
    }
    Tensor tOgO = thr_mma.partition_C(gO);
    Tensor cO = thr_mma.partition_C(make_identity_tensor(tile));
    CUTE_UNROLL
    for (int i = 0; i < size(rO); ++i) {
        if (get<0>(cO(i)) < rows_left) {
            tOgO(i) = rO(i);
        }
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_f16_d64(half_t const* q, half_t const* k, half_t const* v, half_t* o, float* lse, int N, float scale_log2,
              float softmax_scale) {
    flash_fwd<false>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}

extern "C" __global__ void __launch_bounds__(128)
flash_fwd_f16_d64_causal(half_t const* q, half_t const* k, half_t const* v, half_t* o, float* lse, int N,
                     float scale_log2, float softmax_scale) {
    flash_fwd<true>(q, k, v, o, lse, N, scale_log2, softmax_scale);
}
