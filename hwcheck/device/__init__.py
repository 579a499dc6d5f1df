"""The GPU (CuPy, NVRTC) and the code it runs: campaign kernels, lowered programs, instrumented PTX, SASS."""
