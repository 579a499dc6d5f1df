"""Triton kernels written as Triton's users write them (the tutorials' shapes), with host wrappers that launch them
as one launches on a GPU: ``kernel[grid](tensors..., sizes..., META=...)``. Nothing here knows warpsim; the tests
(test_triton.py) run them inside ``warpsim.triton.simulate()``, and gpu_check.py runs the same wrappers on a GPU.

Each ``run_*`` takes the array module's arrays (numpy here, torch on a GPU) and returns what it wrote.
"""

import triton
import triton.language as tl


def strides(t):
    """Element strides: torch's ``stride()``, numpy's byte ``strides`` over its itemsize."""
    return tuple(t.stride()) if hasattr(t, "stride") else tuple(s // t.itemsize for s in t.strides)


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def run_add(x, y, out):
    n = out.shape[0]
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=1024)
    return out


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def run_softmax(x, y, programs=4):
    n_rows, n_cols = x.shape
    softmax_kernel[(programs,)](y, x, n_cols, n_cols, n_rows, n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols),
                                num_warps=4)
    return y


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


def run_layer_norm(x, w, b, y, mean, rstd, eps=1e-5):
    M, N = x.shape
    layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, N, N, eps, BLOCK_SIZE=128, num_warps=4)
    return y, mean, rstd


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def matmul_fp8_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    """C (f32, M x N) = A (M x K) @ B^T (B: N x K), both e4m3 stored as bytes and bit-cast: an FP8 GEMM's main loop,
    as Triton's FP8 examples write it (B K-major, which Hopper's fp8 wgmma needs)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=(offs_m[:, None] < M) & (kk[None, :] < K),
                    other=0).to(tl.float8e4nv, bitcast=True)
        b = tl.load(b_ptr + offs_n[None, :] * K + kk[:, None], mask=(offs_n[None, :] < N) & (kk[:, None] < K),
                    other=0).to(tl.float8e4nv, bitcast=True)
        acc = tl.dot(a, b, acc)
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def run_matmul_fp8(a, b, c):
    """``c = a @ b.T`` for e4m3 bytes ``a`` (M x K) and ``b`` (N x K), 64 x 64 tiles (wgmma on sm_90)."""
    M, K = a.shape
    N = b.shape[0]
    matmul_fp8_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64))](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64,
                                                               BLOCK_K=32, num_warps=4, num_stages=2)
    return c


def run_matmul(a, b, c, block=32):
    M, K = a.shape
    _, N = b.shape
    s = [*strides(a), *strides(b), *strides(c)]
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)  # noqa: E731
    matmul_kernel[grid](a, b, c, M, N, K, *s, BLOCK_SIZE_M=block, BLOCK_SIZE_N=block, BLOCK_SIZE_K=32, GROUP_SIZE_M=2,
                        num_warps=4, num_stages=2)
    return c


@triton.jit
def sum_atomic_kernel(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0))


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + (v % BINS), 1, mask=mask)


@triton.jit
def sum_store_kernel(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(total_ptr, tl.sum(x, axis=0))             # every program stores to one word: a race (the bug)


def run_sum_atomic(x, total):
    n = x.shape[0]
    sum_atomic_kernel[(triton.cdiv(n, 256),)](x, total, n, BLOCK=256)
    return total


def run_histogram(x, hist):
    n = x.shape[0]
    histogram_kernel[(triton.cdiv(n, 128),)](x, hist, n, BINS=hist.shape[0], BLOCK=128)
    return hist


@triton.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK))
    tl.device_print("x", x)


def run_print(x, block=4):
    print_kernel[(x.shape[0] // block,)](x, BLOCK=block, num_warps=1)


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    left = tl.load(x_ptr + offs - SHIFT, mask=(offs >= SHIFT) & (offs < n), other=-1)
    tl.store(out_ptr + offs, left * 3 + 1, mask=offs < n)


def run_shift(x, out, shift=3):
    n = x.shape[0]
    shift_kernel[(triton.cdiv(n, 64),)](x, out, n, SHIFT=shift, BLOCK=64, num_warps=2)
    return out


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_ym, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[None, :] * stride_ym + rm[:, None], tile, mask=mask)


def run_transpose(x, y):
    M, N = x.shape
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 32))
    transpose_kernel[grid](x, y, M, N, strides(x)[0], strides(y)[0], BM=16, BN=32)
    return y


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 64}, num_warps=2)],
                 key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def run_scale(x, out, alpha):
    n = x.shape[0]
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, alpha)
    return out


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, tl.maximum(x, 0))
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(out_ptr + offs, tl.maximum(x, 0), mask=offs < n)


def run_relu(x, out):
    n = x.shape[0]
    relu_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out
