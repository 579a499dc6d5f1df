"""Front ends: everything that turns a user's source into PTX for the core (:mod:`warpsim.ptx`), and the front
door that opens a kernel of it. Siblings; none knows another, and the core knows none of them.

- :mod:`~warpsim.frontends.source`: which front end compiles a file (``compile_source``);
- :mod:`~warpsim.frontends.nvcc` (CUDA C++), :mod:`~warpsim.frontends.cute_dsl` (CuTe DSL): one module a compiler,
  each returning PTX texts (:mod:`~warpsim.frontends.compiled`);
- :mod:`~warpsim.frontends.triton`, :mod:`~warpsim.frontends.numba_cuda`, :mod:`~warpsim.frontends.cupy_raw`: Python
  kernels (``@triton.jit``, ``@cuda.jit``, CuPy ``RawKernel``) compiled by their own tools and launched on numpy
  arrays in place (:mod:`~warpsim.frontends.host`); the switches users turn on (:mod:`~warpsim.frontends.switch`)
  are ``warpsim.triton``, ``warpsim.numba``, ``warpsim.cupy``;
- :mod:`~warpsim.frontends.kernel`: ``open_kernel``: compile, find the kernel, name its parameters, launch;
- :mod:`~warpsim.frontends.args`: a launch written as text (``--arg NAME=VALUE``, ``--cta``);
- :mod:`~warpsim.frontends.grid`: a launch's CTAs in parallel as Ray tasks.
"""
