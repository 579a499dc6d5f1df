"""``warpsim explain``: which shared-memory element lands in which register slot, through which view.

For each chosen thread and each fragment of a configuration, the report gives the fragment's MMA
view (``partition_fragment_A/B``) and copy view (``retile_D``), and for every register slot: the
register and half that hold it, its coordinate in both views, the (row, col) of the shared tensor
it holds, the shared-memory byte address it is loaded from, and the copy call that loads it (for
``ldmatrix``: which lane supplied the row address, and that row's address).

A configuration is the built-in ``"seed"`` (docs/hardware-model.md §1: Q, K and Vᵀ of the flash-attention
tutorial, 4 warps) or a Python file that defines, at module level:

* ``tiled_mma``: a :class:`~warpsim.cute.TiledMMA`;
* ``fragments``: ``{name: (operand, smem_tensor, tiled_copy)}`` or
  ``{name: (operand, smem_tensor, tiled_copy, fragment_source)}``, where ``operand`` is ``"A"`` or
  ``"B"``, ``smem_tensor`` the shared tensor the copy reads, ``tiled_copy`` the copy that fills the
  fragment (``make_tiled_copy_A/B``), and ``fragment_source`` the tensor ``partition_fragment_*``
  is given (default: ``smem_tensor``; the seed's Vᵀ uses its un-swizzled twin);
* optionally ``description``: a line of text.

>>> report = explain("seed", threads=[0])
>>> k = report["threads"][0]["fragments"][1]
>>> k["name"], k["mma_view"], k["copy_view"]
('K', '((_2,_2),_8,(_2,_2)):((_1,_2),_4,(_32,_64))', '((_8,_1),_4,_4):((_1,_0),_8,_32)')
>>> s = k["slots"][2]
>>> (s["register"], s["half"], s["row"], s["col"], s["address"], s["row_lane"])
(1, 0, 0, 8, 8208, 8)
"""

import runpy
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from warpsim.errors import WarpsimError
from warpsim import cute
from warpsim.cute.calls import copy_calls

__all__ = ["explain", "format_text", "load_config", "seed_config", "resolve_config", "ExplainConfig", "FragmentSpec", "ConfigError"]


class ConfigError(WarpsimError, ValueError):
    """A configuration file or a thread selection is unusable; the message says why."""


@dataclass(frozen=True)
class FragmentSpec:
    """One register fragment to explain: its operand, the shared tensor, the copy that fills it."""

    name: str
    operand: str
    smem: object
    copy: object
    source: object


@dataclass(frozen=True)
class ExplainConfig:
    """A tiled MMA and the fragments it reads."""

    name: str
    tiled_mma: object
    fragments: tuple
    description: str = ""


def seed_config(dtype="f16"):
    """docs/hardware-model.md §1: Q (A), K (B) and Vᵀ (B, through ``SM75_U16x8_LDSM_T``) of the seed, 64x64 each."""
    op = cute.SM80_16x8x16_F32F16F16F32_TN() if dtype == "f16" else cute.SM80_16x8x16_F32BF16BF16F32_TN()
    tiled_mma = cute.make_tiled_mma(op, cute.make_layout((4, 1, 1)), (64, 16, 16))
    kv = cute.tile_to_shape(cute.composition(cute.Swizzle(3, 3, 3), cute.make_layout((8, 64), (64, 1))), (64, 64))
    vt = cute.tile_to_shape(cute.composition(cute.Swizzle(3, 3, 3), cute.make_layout((64, 64), (1, 64))), (64, 64))
    s_q = cute.make_tensor(cute.make_smem_ptr(0, dtype), kv)
    s_k = cute.make_tensor(cute.make_smem_ptr(8192, dtype), kv)
    s_vt = cute.make_tensor(cute.make_smem_ptr(16384, dtype), vt)
    s_vt_twin = cute.make_tensor(cute.make_smem_ptr(16384, dtype), cute.make_layout((64, 64), (1, 64)))
    ldsm_n = cute.Copy_Atom(cute.SM75_U32x4_LDSM_N(), dtype)
    ldsm_t = cute.Copy_Atom(cute.SM75_U16x8_LDSM_T(), dtype)
    fragments = (
        FragmentSpec("Q", "A", s_q, cute.make_tiled_copy_A(ldsm_n, tiled_mma), s_q),
        FragmentSpec("K", "B", s_k, cute.make_tiled_copy_B(ldsm_n, tiled_mma), s_k),
        FragmentSpec("Vt", "B", s_vt, cute.make_tiled_copy_B(ldsm_t, tiled_mma), s_vt_twin),
    )
    return ExplainConfig("seed", tiled_mma, fragments,
                         "the seed's gemm_smem: S = Q K^T (A = Q, B = K) and O = P V (B = V^T), 4 warps, "
                         "sQ at 0x0, sK at 0x2000, sV at 0x4000")


def load_config(path):
    """Read a configuration file (see the module docstring); ``ConfigError`` says what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    try:
        namespace = runpy.run_path(str(path), run_name="warpsim_explain_config")
    except (Exception, SystemExit) as e:       # the file is user code: report any failure in one line
        where = ""
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == str(path):
                where = f" (line {tb.tb_lineno})"
            tb = tb.tb_next
        line = getattr(e, "lineno", None) if isinstance(e, SyntaxError) else None
        where = f" (line {line})" if line else where
        if isinstance(e, SystemExit):
            raise ConfigError(f"config file {path}{where}: the file exited while loading (sys.exit({e.code!r}))") \
                from None
        raise ConfigError(f"config file {path}{where}: {type(e).__name__}: {e}") from None
    tiled_mma = namespace.get("tiled_mma")
    if not isinstance(tiled_mma, cute.TiledMMA):
        raise ConfigError(f"config file {path}: it must define tiled_mma = make_tiled_mma(...)")
    frags = namespace.get("fragments")
    if not isinstance(frags, dict) or not frags:
        raise ConfigError(f"config file {path}: it must define fragments = {{name: (operand, smem_tensor, tiled_copy)}}")
    specs = []
    for name, value in frags.items():
        if not isinstance(value, tuple) or len(value) not in (3, 4):
            raise ConfigError(f"config file {path}: fragments[{name!r}] must be (operand, smem_tensor, tiled_copy"
                              f"[, fragment_source])")
        operand, smem, copy = value[:3]
        source = value[3] if len(value) == 4 else smem
        if operand not in ("A", "B"):
            raise ConfigError(f"config file {path}: fragments[{name!r}]: operand must be 'A' or 'B', got {operand!r}")
        for what, x in (("smem_tensor", smem), ("fragment_source", source)):
            if not cute.is_tensor(x) or x.space not in ("smem", "gmem"):
                raise ConfigError(f"config file {path}: fragments[{name!r}]: {what} must be a shared-memory tensor")
        if not isinstance(copy, cute.TiledCopy):
            raise ConfigError(f"config file {path}: fragments[{name!r}]: tiled_copy must be a TiledCopy")
        specs.append(FragmentSpec(str(name), operand, smem, copy, source))
    return ExplainConfig(str(path), tiled_mma, tuple(specs), str(namespace.get("description", "")))


def resolve_config(config):
    """An ``ExplainConfig`` by name: ``seed`` (``seed-f16``), ``seed-bf16``, a config file path, or itself."""
    if isinstance(config, ExplainConfig):
        return config
    if config in ("seed", "seed-f16"):
        return seed_config("f16")
    if config == "seed-bf16":
        return seed_config("bf16")
    return load_config(config)


def _table_2d(layout):
    t, v = int(cute.size(layout, 0)), int(cute.size(layout, 1))
    return cute.layout_table(layout).reshape(v, t).T


def _coord(index, shape):
    """The hierarchical coordinate of 1-D index ``index`` in ``shape``, as nested lists of ints."""
    def plain(c):
        return [plain(x) for x in c] if isinstance(c, tuple) else int(c)
    return plain(cute.idx2crd(int(index), shape))


def _fragment_report(cfg, spec, tid):
    tm = cfg.tiled_mma
    thr = tm.get_slice(tid)
    part = thr.partition_A(spec.smem) if spec.operand == "A" else thr.partition_B(spec.smem)
    frag = thr.partition_fragment_A(spec.source) if spec.operand == "A" else thr.partition_fragment_B(spec.source)
    ident_shape = (int(cute.size(spec.smem.layout, 0)), int(cute.size(spec.smem.layout, 1)))
    ident = cute.make_identity_tensor(ident_shape)
    coords = (thr.partition_A(ident) if spec.operand == "A" else thr.partition_B(ident)).coord_table()
    copy = spec.copy
    tcopy = copy.get_slice(tid)
    src = tcopy.partition_S(spec.smem)
    view = tcopy.retile_D(frag)
    atom = copy.atom
    threads = copy.AtomNumThr
    base = tid - tid % threads
    lanes = np.arange(base, base + threads, dtype=np.int64)
    warp_calls = copy_calls(copy, copy.get_slice(lanes).partition_S(spec.smem), view)   # [calls, lanes, V]
    src_tab, dst_tab = _table_2d(atom.ValLayoutSrc), _table_2d(atom.ValLayoutDst)
    supplier = {}
    for i in range(src_tab.shape[0]):
        for j in range(src_tab.shape[1]):
            supplier.setdefault(int(src_tab[i, j]), (i, j))
    slots, addresses, view_slots = frag.slot_table(), part.address_table(), view.slot_table()
    mma_index = {int(s): j for j, s in enumerate(slots)}
    copy_index = {int(s): i for i, s in enumerate(view_slots)}
    where = {int(s): (c, v) for c, row in enumerate(warp_calls.dst) for v, s in enumerate(row)}
    rows = []
    for s in range(frag.engine.size):
        j, i = mma_index[s], copy_index[s]
        c, v = where[s]
        lane, value = supplier[int(dst_tab[tid % threads, v])]
        loaded = int(warp_calls.src[c, lane, value])
        if loaded != int(addresses[j]):
            raise RuntimeError(f"explain: internal inconsistency for thread {tid} {spec.name} slot {s}: the copy "
                               f"loads {loaded:#x}, the MMA view says {int(addresses[j]):#x}")
        reg, half = cute.register_of_slot(frag.dtype, s)
        rows.append({
            "slot": s, "register": int(reg), "half": int(half),
            "mma_index": j, "mma_coord": _coord(j, frag.shape),
            "copy_index": i, "copy_coord": _coord(i, view.shape),
            "row": int(coords[j, 0]), "col": int(coords[j, 1]), "address": int(addresses[j]),
            "copy_call": int(c), "call_value": int(v),
            "row_lane": int(base + lane), "row_address": int(warp_calls.src[c, lane, 0]),
        })
    return {
        "name": spec.name, "operand": spec.operand, "dtype": frag.dtype,
        "copy_atom": atom.op.name, "instruction": getattr(atom.op, "ptx", atom.op.name),
        "smem_layout": str(spec.smem.layout), "smem_base": spec.smem.engine.address,
        "partition": str(part.layout), "mma_view": str(frag.layout),
        "copy_partition": str(src.layout), "copy_view": str(view.layout),
        "slots": rows,
    }


def parse_threads(text, n_threads):
    """``"0,5,8-11"`` -> ``[0, 5, 8, 9, 10, 11]``; ``ConfigError`` for anything outside ``[0, n_threads)``."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        try:
            if "-" in part[1:]:
                lo, hi = part.split("-", 1) if not part.startswith("-") else (part, None)
                ids = [int(lo), int(hi)]
            else:
                ids = [int(part)]
        except (TypeError, ValueError):
            raise ConfigError(f"bad thread list {text!r}: expected numbers like 0,5 or 8-11") from None
        check_threads(ids, n_threads)          # before a range is expanded
        out.extend(range(ids[0], ids[-1] + 1))
    return check_threads(out, n_threads)


def check_threads(threads, n_threads):
    """The thread ids as ints; ``ConfigError`` for an unknown thread."""
    out = []
    for t in threads:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
            raise ConfigError(f"unknown thread {t!r}: threads are integers 0-{n_threads - 1}")
        if not 0 <= int(t) < n_threads:
            raise ConfigError(f"unknown thread {int(t)}: the tiled MMA has {n_threads} threads (0-{n_threads - 1})")
        out.append(int(t))
    if not out:
        raise ConfigError("no threads chosen")
    return out


def explain(config="seed", threads=(0,)):
    """The explain report (a JSON-ready dict) of ``config`` for ``threads``.

    ``config``: ``"seed"`` (or ``"seed-bf16"``), a configuration file path, or an ExplainConfig;
    ``threads``: thread ids, or a string like ``"0,5"``. Schema: see README "warpsim explain".
    """
    cfg = resolve_config(config)
    n = cfg.tiled_mma.size()
    ids = parse_threads(threads, n) if isinstance(threads, str) else check_threads(list(threads), n)
    return {
        "config": cfg.name,
        "description": cfg.description,
        "tiled_mma": str(cfg.tiled_mma),
        "threads": [{"thread": t, "warp": t // 32, "lane": t % 32,
                     "fragments": [_fragment_report(cfg, spec, t) for spec in cfg.fragments]} for t in ids],
    }


def _crd(c):
    return "(" + ",".join(_crd(x) for x in c) + ")" if isinstance(c, list) else str(c)


def format_text(report):
    """The human-readable form of an explain report."""
    lines = [f"config: {report['config']}" + (f" -- {report['description']}" if report["description"] else "")]
    lines += report["tiled_mma"].splitlines()
    for th in report["threads"]:
        lines += ["", f"thread {th['thread']} (warp {th['warp']}, lane {th['lane']})"]
        for f in th["fragments"]:
            lines += [
                "",
                f"  {f['name']}: operand {f['operand']} ({f['dtype']}), loaded by {f['copy_atom']} ({f['instruction']})",
                f"    shared layout          {f['smem_layout']}  (base {f['smem_base']:#x})",
                f"    MMA partition          {f['partition']}",
                f"    MMA view (fragment)    {f['mma_view']}",
                f"    copy partition_S       {f['copy_partition']}",
                f"    copy view (retile_D)   {f['copy_view']}",
                "    slot  reg    MMA view           copy view      (row,col)   smem addr  copy call  row from lane (addr)",
            ]
            for s in f["slots"]:
                reg = f"r{s['register']}" + ("" if s["half"] < 0 else (".lo" if s["half"] == 0 else ".hi"))
                lines.append(
                    f"    {s['slot']:4d}  {reg:<6} {_crd(s['mma_coord']):<18} {_crd(s['copy_coord']):<14} "
                    f"({s['row']:2d},{s['col']:2d})     {s['address']:#07x}    "
                    f"#{s['copy_call']:<2d} v{s['call_value']:<2d}   {s['row_lane']:3d} ({s['row_address']:#07x})")
    return "\n".join(lines) + "\n"
