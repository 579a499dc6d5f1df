// CuTe's own pictures of a few tiled MMAs and tiled copies (include/cute/util/print_svg.hpp,
// print_latex.hpp), compiled host-only by tests/draw/conftest.py. Each picture follows a line
// "#### <name>"; test_tv_oracle.py parses them and compares with warpsim.draw.
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/util/print_svg.hpp>
#include <cute/util/print_latex.hpp>

using namespace cute;

int main() {
  // The seed: 4 warps along M, tile 64x16x16 (REFERENCE.md section 1).
  auto seed = make_tiled_mma(MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>{}, Layout<Shape<_4,_1,_1>>{},
                             Tile<_64,_16,_16>{});
  printf("#### svg seed\n");
  print_svg(seed);
  // 2x2 warps, f16 accumulators, k8, natural tile.
  auto k8 = make_tiled_mma(MMA_Atom<SM80_16x8x8_F16F16F16F16_TN>{}, Layout<Shape<_2,_2,_1>>{});
  printf("#### svg k8_2x2\n");
  print_svg(k8);
  // bf16, 2x2 warps, tile 32x32x16 (examples/explain_config.py), through print_latex.
  auto bf = make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{}, Layout<Shape<_2,_2,_1>>{},
                           Tile<_32,_32,_16>{});
  printf("#### latex bf16_2x2\n");
  print_latex(bf);
  // Copies: the seed's ldmatrix copies of Q (A), K (B) and V^T (B, transposed).
  printf("#### latex copy_A_ldsm_n\n");
  print_latex(make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, seed));
  printf("#### latex copy_B_ldsm_n\n");
  print_latex(make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, seed));
  printf("#### latex copy_B_ldsm_t\n");
  print_latex(make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{}, seed));
  printf("#### latex copy_A_x2_k8\n");
  print_latex(make_tiled_copy_A(Copy_Atom<SM75_U32x2_LDSM_N, half_t>{}, k8));
  // A thread-value copy: 16x8 threads, 8 values each (128-bit vectors), row-major threads.
  printf("#### latex copy_universal\n");
  print_latex(make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{},
                              Layout<Shape<_16,_8>, Stride<_8,_1>>{}, Layout<Shape<_1,_8>>{}));
  return 0;
}
