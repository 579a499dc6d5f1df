"""CuPy ``RawKernel`` kernels offline on warpsim: change the import, keep the kernel and the call.

::

    from warpsim.cupy import RawKernel            # instead of: from cupy import RawKernel
    add = RawKernel(r'''
    extern "C" __global__ void add(const float* x, const float* y, float* z, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) z[i] = x[i] + y[i];
    }''', "add")
    add((4,), (256,), (x, y, z, np.int32(n)))     # numpy arrays; z holds x + y afterwards

A C++ (not ``extern "C"``) kernel goes through ``RawModule(code=..., name_expressions=[name]).get_function(name)``, as in
CuPy. See :mod:`warpsim.frontends.cupy_raw` (compiled with nvcc; arguments passed as CuPy passes them) and
docs/guides/cupy.md.
"""

from warpsim.frontends.cupy_raw import RawKernel, RawModule, scalar_bits

__all__ = ["RawKernel", "RawModule", "scalar_bits"]
