// examples/cute_cpp/flash_fwd.cu compiled with --use_fast_math: the same eight kernels, the same names.
//
// Fast math makes every f32 operation flush denormals (.ftz), 1/l an approximate reciprocal and logf
// __logf (lg2.approx.ftz.f32 times ln 2); the rest of the PTX is the same. The line below is read by
// warpsim's compile step (warpsim.frontends.nvcc.source_nvcc_flags), so warpsim run, hwcheck run and the
// acceptance set all compile this file with the flag.
//
// warpsim: nvcc-flags --use_fast_math

#include "flash_fwd.cu"
