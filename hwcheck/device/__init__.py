"""The GPU (CuPy, NVRTC) and the code it runs: campaign kernels, instrumented PTX, SASS."""
