"""PTX instruction families: one home per family, where its decoding and its execution meet.

A family is the instructions that share operands, state and semantics: one module here (or one subpackage once it
outgrows ~500 lines) holding

- its **decoder mixin** (``DECODER``): the ``do_<op>`` methods that check an instruction's modifiers and operands
  and emit its row (:mod:`warpsim.ptx.decode`'s columns; the checks every family shares:
  :class:`~warpsim.ptx.families.common.FamilyDecoder`);
- its **execution**, ``@njit`` functions on the decoded rows: ``thread_<family>`` (one thread's instruction, its pc
  advanced, False on a fault) and/or ``warp_<family>`` (the lanes of a warp at once; for a per-thread family a fast
  path that returns False for the forms it leaves to the thread path);

while the bit-exact semantics stay one layer down, in :mod:`warpsim.isa` (fragment tables, ``warp_mma``,
``warp_ldmatrix``, the float and SFU models): the family module reads operands and writes results, the isa
computes. Operands are read and written through :mod:`warpsim.ptx.operands`.

=============== ==================================================== ==========================================
family          instructions                                         semantics (``warpsim.isa``)
=============== ==================================================== ==========================================
``integer``     integer/bit ALU, ``setp selp slct mov cvt cvta``      ``alu`` (``warpsim.ptx.alu``), ``cvt``
``floats``      every float-typed instruction, MUFU                  ``fparith fpcompare fp64 cvt mufu*
                                                                     sfu_* hostfloat``
``memory``      ``ld ldu st atom red``                               spaces: ``warpsim.ptx.memory``
``async_copy``  ``cp.async`` + ``commit_group``/``wait_group``/...   (queues in the interpreter's state)
``collectives`` ``shfl vote match redux activemask`` (``.sync``)     -
``barriers``    ``bar barrier`` (``.sync .arrive .warp.sync``),      -
                fences, ``membar nanosleep prefetch ...``
``ldmatrix``    ``ldmatrix stmatrix``                                ``ldmatrix``, ``fragments``
``mma``         ``mma.sync``                                         ``mma``, ``fragments``, ``arith``
``control``     ``bra call ret exit trap``, ``vprintf``,             -
                ``__assertfail``
=============== ==================================================== ==========================================

Dispatch: :data:`FAMILIES` is the one list. The decoder class is built from it
(``InstructionDecoder(*[family.DECODER for family in FAMILIES])``; ``instruction()`` finds ``do_<op>`` by the
:class:`~warpsim.ptx.opcodes.Op` name), and the interpreter's switches below it (``thread_op``,
``warp_collective``, ``warp_simple``: one branch per family, each a direct call of that family's ``@njit``
function, so Numba compiles the whole step into one function with no Python-level or first-class dispatch) are
what :mod:`warpsim.ptx.interp` calls.

Adding a family (``wgmma``, sm_90, as the example):

1. ``warpsim/isa/wgmma.py``: the semantics and the fragment tables (the warpgroup's lane/register <-> (row, col)
   maps as data, as :mod:`warpsim.isa.fragments` does for ``mma.sync``; the accumulation model);
2. ``warpsim/ptx/families/wgmma.py``: ``WgmmaDecoder.do_wgmma`` (shape, types, the shared-memory matrix
   descriptors) and ``warp_wgmma``, which gathers the operands of the four warps of a warpgroup and calls the isa;
   ``wgmma.fence``/``commit_group``/``wait_group`` beside it;
3. the registration, two lines: ``WGMMA = 59`` and ``"wgmma": Op.WGMMA`` in :mod:`warpsim.ptx.opcodes` (its
   ``NOT_YET`` entry dropped), ``wgmma`` in :data:`FAMILIES` and its branch in the switch here.
"""

from warpsim.ptx.families import async_copy, barriers, collectives, control, ldmatrix, memory, mma

__all__ = ["FAMILIES", "DECODERS"]

# the families, one entry each (integer and floats: still in warpsim.ptx.instructions/fpdecode, thread.py, warp.py)
FAMILIES = (memory, async_copy, collectives, barriers, ldmatrix, mma, control)
DECODERS = tuple(family.DECODER for family in FAMILIES)     # the decoder's mixins, in FAMILIES' order
