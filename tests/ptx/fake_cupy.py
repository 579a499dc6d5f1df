"""A stand-in for the part of CuPy the PTX GPU tests use, running each kernel on warpsim's PTX interpreter.

It keeps the behaviour of CuPy that mattered for the harness fault of 2026-12-01: ``RawModule(path=...)``
is memoized by its arguments (CuPy 14, cupy/_core/raw.pyx: ``_get_raw_module`` is
``@cupy._util.memoize(for_each_device=True)``), and the file is read when the module is first made. A
test that writes two kernels to one path gets the first kernel twice, here as on the GPU.
"""

import numpy as np

import warpsim.ptx


class _Kernel:
    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, grid, block, args):
        res = self.module.launch(self.name, grid=grid[0], block=block[0], args=list(args), quiet=True)
        for (param, _), array in zip(self.module.params(self.name), args):
            array[...] = res.buffers[param]


class _Module:
    def __init__(self, path):
        with open(path) as f:
            self.module = warpsim.ptx.load(f.read())

    def get_function(self, name):
        return _Kernel(self.module, name)


class FakeCupy:
    """``cupy`` for ``tests/ptx/ptx_gpu.py``: an sm_90 device, CUDA driver 13.0, modules memoized by path."""

    def __init__(self):
        self.loaded = {}                        # path -> module, as CuPy's memo
        self.cuda = self._Cuda()

    class _Cuda:
        class runtime:
            @staticmethod
            def driverGetVersion():
                return 13000

        class Device:
            compute_capability = "90"

            def __init__(self, index=0):
                pass

            def synchronize(self):
                pass

    def RawModule(self, path):                  # noqa: N802 -- CuPy's name
        if path not in self.loaded:
            self.loaded[path] = _Module(path)
        return self.loaded[path]

    @staticmethod
    def asarray(x):
        return np.array(x, copy=True)

    @staticmethod
    def asnumpy(x):
        return np.array(x, copy=True)
