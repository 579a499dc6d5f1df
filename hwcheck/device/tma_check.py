"""Why a TMA kernel faults on the GPU: ``tile_load`` of ``examples/hopper/tma_copy.cu`` (swizzle none, f32, a 70 x 100
tensor in 32 x 24 boxes, the out-of-bounds part zero) straight through the CUDA driver (ctypes, no CuPy), each of
three modules (``nvcc``: a cubin from nvcc; ``ptxas``: a cubin from another ptxas, e.g. the nvcc wheel's; ``jit``:
the PTX, assembled by the driver) launched two ways (``args``: ``kernelParams``, as ``<<<>>>`` does; ``buffer``: one
parameter block through ``CU_LAUNCH_PARAM_BUFFER_POINTER``, as hwcheck did before this check). Each variant runs in
its own process (a fault loses the CUDA context) and prints whether the GPU's bytes are the box's.

    python -m hwcheck.device.tma_check DIR     # DIR: tma_copy.nvcc.cubin, tma_copy.ptxas.cubin, tma_copy.cu.sm_90.0.ptx

Made after two H100 runs faulted on every TMA launch (conformance/h100/hopper-tma-second-run/README.md). Its answer
(conformance/h100/hopper-tma-third-run/): all three modules run with ``args`` and fault with ``buffer``, so hwcheck
now passes ``kernelParams``.
Made after two H100 runs faulted on every TMA launch (conformance/h100/hopper-tma-second-run/README.md).
"""
import ctypes
import subprocess
import sys

import numpy as np

ROWS, COLS, BOX_ROWS, BOX_COLS = 70, 100, 32, 24
cu = None                     # the CUDA driver (libcuda), opened by run()


def expected_boxes():
    """What ``out`` must hold: each CTA's box (row-major, x fastest over CTAs), zeros outside the tensor, as u32."""
    t = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) + 1
    gx, gy = -(-COLS // BOX_COLS), -(-ROWS // BOX_ROWS)
    pad = np.zeros((gy * BOX_ROWS, gx * BOX_COLS), np.float32)
    pad[:ROWS, :COLS] = t
    return t, pad.reshape(gy, BOX_ROWS, gx, BOX_COLS).transpose(0, 2, 1, 3).reshape(-1).view(np.uint32)


def ck(rc, what):
    if rc != 0:
        s = ctypes.c_char_p()
        cu.cuGetErrorString(rc, ctypes.byref(s))
        raise RuntimeError(f"{what}: {rc} {s.value.decode() if s.value else ''}")


def run(module_kind, mode, folder, kernel="tile_load"):
    global cu
    cu = ctypes.CDLL("libcuda.so.1")
    ck(cu.cuInit(0), "init")
    dev = ctypes.c_int()
    ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "dev")
    ctx = ctypes.c_void_p()
    ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx")
    ck(cu.cuCtxSetCurrent(ctx), "setctx")
    path = {"nvcc": f"{folder}/tma_copy.nvcc.cubin", "ptxas": f"{folder}/tma_copy.ptxas.cubin",
            "jit": f"{folder}/tma_copy.cu.sm_90.0.ptx"}[module_kind]
    image = open(path, "rb").read() + (b"\0" if module_kind == "jit" else b"")
    mod = ctypes.c_void_p()
    ck(cu.cuModuleLoadData(ctypes.byref(mod), image), "load")
    fn = ctypes.c_void_p()
    ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, kernel.encode()), "getfn")
    rows, cols, brow, bcol = ROWS, COLS, BOX_ROWS, BOX_COLS
    t, want = expected_boxes()
    gx, gy = -(-cols // bcol), -(-rows // brow)
    nbytes = brow * bcol * 4
    dt = ctypes.c_uint64()
    ck(cu.cuMemAlloc_v2(ctypes.byref(dt), t.nbytes), "alloc")
    ck(cu.cuMemcpyHtoD_v2(dt, t.ctypes.data, t.nbytes), "htod")
    out = np.zeros(gx * gy * nbytes // 4, np.uint32)
    do = ctypes.c_uint64()
    ck(cu.cuMemAlloc_v2(ctypes.byref(do), out.nbytes), "alloc2")
    ck(cu.cuMemcpyHtoD_v2(do, out.ctypes.data, out.nbytes), "htod2")
    raw = (ctypes.c_uint8 * 256)()
    at = (ctypes.addressof(raw) + 63) // 64 * 64
    dims = (ctypes.c_uint64 * 2)(cols, rows)
    strides = (ctypes.c_uint64 * 1)(cols * 4)
    box = (ctypes.c_uint32 * 2)(bcol, brow)
    ones = (ctypes.c_uint32 * 2)(1, 1)
    enc = cu.cuTensorMapEncodeTiled
    enc.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                    ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                    ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    ck(enc(at, 7, 2, dt.value, dims, strides, box, ones, 0, 0, 0, 0), "encode")
    mapbytes = bytes((ctypes.c_uint8 * 128).from_address(at))
    b0, b1, nb = ctypes.c_int(bcol), ctypes.c_int(brow), ctypes.c_int(nbytes)
    ptr = ctypes.c_uint64(do.value)
    if mode == "args":
        params = (ctypes.c_void_p * 5)(at, ctypes.addressof(ptr), ctypes.addressof(b0), ctypes.addressof(b1),
                                       ctypes.addressof(nb))
        rc = cu.cuLaunchKernel(fn, gx, gy, 1, 128, 1, 1, nbytes, None, params, None)
    else:
        buf = bytearray(148)
        buf[0:128] = mapbytes
        buf[128:136] = do.value.to_bytes(8, "little")
        buf[136:140] = bcol.to_bytes(4, "little")
        buf[140:144] = brow.to_bytes(4, "little")
        buf[144:148] = nbytes.to_bytes(4, "little")
        cbuf = ctypes.create_string_buffer(bytes(buf), len(buf))
        size = ctypes.c_size_t(len(buf))
        extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(cbuf), 2, ctypes.addressof(size), 0)
        rc = cu.cuLaunchKernel(fn, gx, gy, 1, 128, 1, 1, nbytes, None, None, extra)
    ck(rc, "launch")
    ck(cu.cuCtxSynchronize(), "sync")
    ck(cu.cuMemcpyDtoH_v2(out.ctypes.data, do, out.nbytes), "dtoh")
    return f"match={bool((out == want).all())} nonzero={int((out != 0).sum())}"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and ":" in argv[1]:                 # one variant, in this process
        mk, mode = argv[1].split(":")
        try:
            print(run(mk, mode, argv[0]))
        except Exception as e:                            # the driver's error, as the line to read
            print("ERROR", e)
        return 0
    if len(argv) != 1:
        sys.stderr.write("usage: python -m hwcheck.device.tma_check DIR\n")
        return 2
    for mk in ("nvcc", "ptxas", "jit"):
        for mode in ("args", "buffer"):
            try:
                p = subprocess.run([sys.executable, "-m", "hwcheck.device.tma_check", argv[0], f"{mk}:{mode}"],
                                   capture_output=True, text=True, timeout=60)
                print(f"{mk:6} {mode:7}", p.stdout.strip() or p.stderr.strip().splitlines()[-1:], flush=True)
            except subprocess.TimeoutExpired:
                print(f"{mk:6} {mode:7} TIMEOUT", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
