"""Thread block clusters in the core: the cluster's special registers, mapa and distributed shared memory
(examples/hopper/cluster_probe.cu), TMA multicast into both CTAs of a cluster with a remote mbarrier arrive
(examples/hopper/tma_multicast.cu), and the errors: a barrier.cluster that can never complete, a bad --cluster, a mapa
of a rank outside the cluster."""

import os
import subprocess
import sys

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from warpsim.isa.tma import TensorMap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOPPER = os.path.join(ROOT, "examples", "hopper")


def _kernel(name, source):
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip(f"nvcc not found on PATH or under CUDA_HOME (examples/hopper/{source} is CUDA C++)")
    pytest.importorskip("cutlass_library", reason="the CuTe headers (pip install -e '.[cute]')")
    from warpsim.frontends.kernel import open_kernel
    return open_kernel(os.path.join(HOPPER, source), name, arch="sm_90")


GPU_PROBE = os.path.join(ROOT, "conformance", "h100", "hopper-tma-fourth-run", "cluster-check.txt")
# the words of the probe that are the same on any machine (10, 11 and 12, 13: generic addresses, whose window each
# machine places where it likes: their low words are compared, the high ones are not)
SAME = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15]


def test_the_cluster_registers_and_addresses_are_the_h100s():
    """examples/hopper/cluster_probe.cu (clusters of two, four CTAs) against the words an H100 wrote
    (``python -m hwcheck.device.cluster_check``): special registers, every CTA's own shared address carrying its
    rank (0x1000400 in rank 1), mapa's, and what the peer stored through distributed shared memory."""
    k = _kernel("cluster_probe", "cluster_probe.cu")
    out = k.launch(grid=4, block=32, args={"out": np.zeros(64, np.uint32)}).buffers
    words = next(iter(out.values())).reshape(4, 16).astype(np.int64)
    with open(GPU_PROBE, encoding="utf-8") as f:
        gpu = np.array([[int(w, 16) for w in line.split()] for line in f.read().splitlines()[1:5]], np.int64)
    assert gpu.shape == (4, 16)
    assert (words[:, SAME] == gpu[:, SAME]).all(), (words[:, SAME], gpu[:, SAME])
    assert (words[:, 14] == (np.arange(4) % 2 ^ 1) + 100).all()       # the peer's rank + 100


def test_tma_multicast_fills_both_ctas_and_the_remote_arrive_releases_cta_0():
    k = _kernel("tile_multicast", "tma_multicast.cu")
    t = np.arange(64 * 40, dtype=np.float32).reshape(64, 40) + 1
    args = {"map": TensorMap(t, (16, 32)), "out": np.zeros(4096, np.uint32), "peer": np.zeros(4, np.uint32),
            "arrivals": np.zeros(2, np.uint32), "box_rows": 16, "bytes": 4096}
    res = k.launch(grid=4, block=128, smem=8192, args=args)
    got = {p.source_name: res.buffers[p.name] for p in k.params if p.name in res.buffers}
    tiles = got["out"].reshape(4, 32, 32)
    for c in range(4):
        cluster = c // 2
        want = t[cluster * 32:cluster * 32 + 32, :32].view(np.uint32)           # both halves, in either CTA
        assert (tiles[c] == want).all(), c
    assert (got["peer"] == t[[0, 0, 32, 32], 0].view(np.uint32)).all()
    assert (got["arrivals"] == 2).all()


HANGS = r"""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry hangs()
.reqnctapercluster 2, 1, 1
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %cluster_ctarank;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra ZERO;
    mbarrier.init.shared::cta.b64 [bar], 1;           // rank 1 waits for rank 0's arrive
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    bra DONE;
ZERO:
    barrier.cluster.arrive;                          // which rank 1 never reaches: rank 0 never arrives
    barrier.cluster.wait;
    mov.u32 %r2, bar;
    mapa.shared::cluster.u32 %r3, %r2, 1;
    mbarrier.arrive.shared::cluster.b64 _, [%r3];
DONE:
    ret;
}
"""


def test_a_cluster_barrier_that_one_cta_never_arrives_at_is_a_deadlock_naming_it():
    from warpsim import ptx
    m = ptx.load(HANGS)
    with pytest.raises(SimulatorFault, match=r"hangs: deadlock in cluster \(0, 0, 0\) \(CTAs \(0, 0, 0\), \(1, 0, 0\)\)"
                                             r": CTA \(\d, 0, 0\) warp 0 lane 0 waits at barrier.cluster.wait .*"
                                             r"32 of the cluster's 64 threads have arrived"):
        m.launch("hangs", grid=2, block=32)


MAPA = r"""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry far(.param .u32 r)
{
    .reg .b32 %r<4>;
    .shared .align 4 .b32 cell;
    ld.param.u32 %r1, [r];
    mov.u32 %r2, cell;
    mapa.shared::cluster.u32 %r3, %r2, %r1;
    st.shared::cluster.u32 [%r3], %r1;
    ret;
}
"""


def test_a_mapa_outside_the_cluster_is_a_fault_and_a_bad_cluster_is_refused():
    from warpsim import ptx
    m = ptx.load(MAPA)
    m.launch("far", grid=4, block=32, args={"r": 1}, cluster=2)
    with pytest.raises(SimulatorFault, match=r"mapa.* bad operand 2 \(limit 2\)"):
        m.launch("far", grid=4, block=32, args={"r": 2}, cluster=2)
    with pytest.raises(ValueError, match=r"far: --cluster 3,1,1 does not divide the grid 4,1,1"):
        m.launch("far", grid=4, block=32, args={"r": 0}, cluster=3)
    with pytest.raises(ValueError, match=r"far: --cluster 4,4,1 has 16 CTAs; at most 8"):
        m.launch("far", grid=(4, 4), block=32, args={"r": 0}, cluster=(4, 4))
    h = ptx.load(HANGS)
    with pytest.raises(ValueError, match=r"hangs: .reqnctapercluster \(2, 1, 1\) requires --cluster 2,1,1, got 1,1,1"):
        h.launch("hangs", grid=2, block=32, cluster=1)


def test_warpsim_run_refuses_a_bad_cluster_in_one_line(tmp_path):
    path = tmp_path / "far.ptx"
    path.write_text(MAPA)
    p = subprocess.run([sys.executable, "-m", "warpsim", "run", str(path), "--kernel", "far", "--grid", "4",
                        "--block", "32", "--arg", "r=0", "--cluster", "3"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0 and "--cluster 3,1,1 does not divide the grid 4,1,1" in p.stderr


def test_a_histogram_in_distributed_shared_memory_counts_every_value_once():
    """examples/hopper/cluster_histogram.cu: cooperative_groups' map_shared_rank + atomicAdd (mapa.u64 and a generic
    atom on another CTA's shared memory), query_shared_rank (getctarank.u64)."""
    k = _kernel("cluster_histogram", "cluster_histogram.cu")
    rng = np.random.default_rng(7)
    values = rng.integers(-2000, 2000, 3000).astype(np.int32)
    res = k.launch(grid=4, block=128, smem=1024, args={"input": values, "bins": np.zeros((2, 256), np.int32),
                                                       "ranks": np.zeros(8, np.uint32), "n": 3000, "nbins": 256})
    got = {p.source_name: res.buffers[p.name] for p in k.params if p.name in res.buffers}
    for c in range(2):
        mine = values[c * 1500:(c + 1) * 1500] % 256               # numpy's % is the kernel's with the fix-up
        assert (got["bins"].reshape(2, 256)[c] == np.bincount(mine, minlength=256)).all(), c
    assert got["ranks"].tolist() == [1, 0, 0, 1, 1, 0, 0, 1]


ATOMS = r"""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry atoms(.param .u64 out)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 cell[4];
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, %tid.x;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 st.shared.u32 [cell], 0;
    @%p1 st.shared.u32 [cell+4], 7;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    mov.u32 %r3, cell;
    xor.b32 %r4, %r1, 1;
    mapa.shared::cluster.u32 %r5, %r3, %r4;          // the peer's cells
    atom.shared::cluster.add.u32 %r6, [%r5], %r2;    // the sum of 0..31 in the peer's cell[0]
    add.u32 %r7, %r5, 4;
    atom.shared::cluster.cas.b32 %r8, [%r7], 7, %r2; // one lane wins: 7 -> its tid
    getctarank.shared::cluster.u32 %r9, %r5;
    getctarank.shared::cluster.u32 %r10, cell;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ld.param.u64 %rd1, [out];
    mov.u32 %r11, %ctaid.x;
    mul.wide.u32 %rd2, %r11, 16;
    add.u64 %rd1, %rd1, %rd2;
    @%p1 ld.shared.u32 %r6, [cell];
    @%p1 ld.shared.u32 %r8, [cell+4];
    @%p1 st.global.v4.u32 [%rd1], {%r6, %r8, %r9, %r10};
    ret;
}
"""


def test_atomics_and_getctarank_on_shared_cluster_reach_the_peer():
    from warpsim import ptx
    m = ptx.load(ATOMS.replace(".reg .b32 %r<12>;", ".reg .pred %p<2>;\n    .reg .b32 %r<12>;"))
    out = m.launch("atoms", grid=4, block=32, args={"out": np.zeros(16, np.uint32)}, cluster=2).buffers["out"]
    rows = out.reshape(4, 4)
    assert (rows[:, 0] == sum(range(32))).all()            # every lane of the peer added its tid
    assert (rows[:, 1] == 0).all()                          # lane 0, first in the simulator's lane order, won the cas
    assert rows[:, 2].tolist() == [1, 0, 1, 0] and rows[:, 3].tolist() == [0, 1, 0, 1]
