"""The host a benchmark ran on, as one line: CPU model, vector features, cores, software versions.

Every benchmark prints ``host_line()`` first, and bench/RESULTS.md quotes it: a figure means
nothing without the CPU it was measured on (the mma kernel once ran at half speed on AVX-512 hosts).

>>> line = host_line()
>>> line.startswith("host: ") and "cpus" in line and "numpy" in line
True
"""

import os
import platform

import numpy as np

__all__ = ["host_line", "cpu_model", "vector_flags"]

# The flags that decide how LLVM vectorises the kernels (x86-64), in the order printed.
FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16")


def cpu_model():
    """The CPU's model name, with its family and model numbers where the OS gives them (hwcheck's reports say the
    same: :func:`hwcheck.report.cpu_model`)."""
    from hwcheck.report import cpu_model as model
    return model()


def vector_flags():
    """The vector features of ``FLAGS`` this CPU has (empty off Linux x86-64)."""
    from hwcheck.report import cpu_fields
    flags = set(cpu_fields().get("flags", "").split())
    return [f for f in FLAGS if f in flags]


def host_line():
    """``host: MODEL, ARCH, N cpus, flags ..., llvm cpu NAME, python X, numpy Y, numba Z``."""
    try:
        import numba
        from llvmlite import binding
        llvm = f"llvm cpu {binding.get_host_cpu_name()}, numba {numba.__version__}"
    except ImportError:
        llvm = "numba not installed"
    flags = " ".join(vector_flags()) or "none known"
    return (f"host: {cpu_model()}, {platform.machine()}, {os.cpu_count()} cpus, flags {flags}, {llvm}, "
            f"python {platform.python_version()}, numpy {np.__version__}")


if __name__ == "__main__":
    print(host_line())
