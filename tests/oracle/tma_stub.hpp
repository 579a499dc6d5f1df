// The TMA oracle's stand-in for the CUDA driver: CuTe's make_tma_copy calls cuTensorMapEncodeTiled (directly, with
// CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL); this definition records the arguments instead of encoding, so the host-only
// oracle sees exactly what CuTe would ask the driver for, with no GPU and no libcuda. Weak: every TU may define it.
#pragma once
#define CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL 1
#include <cuda.h>
#include <cstdio>
#include <string>

namespace oracle_tma {
// One encode's arguments, as the line warpsim.cute.TmaCopy.encode_text() writes.
struct Fields { std::string text; };
inline Fields& last() { static Fields f; return f; }
}  // namespace oracle_tma

extern "C" __attribute__((weak)) CUresult cuTensorMapEncodeTiled(
    CUtensorMap*, CUtensorMapDataType dtype, cuuint32_t rank, void*, const cuuint64_t* dims,
    const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* elem, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  auto list = [](auto const* v, unsigned n) {
    std::string s = "(";
    for (unsigned i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string((unsigned long long)v[i]);
    return s + ")";
  };
  oracle_tma::last().text = "dtype=" + std::to_string(int(dtype)) + " rank=" + std::to_string(rank) +
      " dims=" + list(dims, rank) + " strides=" + list(strides, rank - 1) + " box=" + list(box, rank) +
      " elem=" + list(elem, rank) + " interleave=" + std::to_string(int(interleave)) +
      " swizzle=" + std::to_string(int(swizzle)) + " l2=" + std::to_string(int(l2)) +
      " oob=" + std::to_string(int(oob));
  return CUDA_SUCCESS;
}

#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>

namespace cute {
inline void print(oracle_tma::Fields const& f) { printf("%s", f.text.c_str()); }
}  // namespace cute
