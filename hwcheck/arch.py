"""Which of warpsim's arithmetic models (:mod:`warpsim.isa.arith`) a GPU is checked against, stated once.

A GPU names itself by compute capability (``"90"``); warpsim's models are named ``sm80`` and ``sm90``; PTX
for a model is compiled for its target (``sm_90``). ``--arch`` overrides the model everywhere in hwcheck.

>>> model_arch("90"), model_arch("89"), model_arch("100", "sm90")
('sm90', 'sm80', 'sm90')
>>> ptx_target("sm80"), ptx_target(DEFAULT_ARCH), ptx_target("sm_90"), model_arch("75", "sm_80")
('sm_80', 'sm_90', 'sm_90', 'sm80')
"""

from __future__ import annotations

from hwcheck.errors import HwcheckError
from warpsim.isa.arith import DEFAULT_ARCH, SM80, SM90, arch_name

__all__ = ["model_arch", "ptx_target"]

_OF_GPU = {"80": SM80.name, "89": SM80.name, "90": SM90.name}      # compute capability -> tensor-core model
_TARGET = {SM80.name: "sm_80", SM90.name: "sm_90"}                 # model -> PTX target


def model_arch(compute_capability: str, override: str | None = None) -> str:
    """warpsim's tensor-core model for a GPU: ``override`` if given (else ``ValueError``), else by compute
    capability (else ``HwcheckError``)."""
    if override is not None:
        try:
            return arch_name(override)
        except ValueError as e:
            raise ValueError(f"--arch {override}: {e}") from None
    try:
        return _OF_GPU[str(compute_capability)]
    except KeyError:
        raise HwcheckError(f"hwcheck: no tensor-core model is known for compute capability "
                           f"{compute_capability}; pass --arch sm_80 or --arch sm_90") from None


def ptx_target(model: str) -> str:
    """The PTX target a model's kernels are compiled for (``sm_90`` for ``sm90``), the model spelled any way
    :func:`~warpsim.isa.arith.arch_name` takes (``sm_90`` too: a caller's spelling never picks another target);
    ``ValueError`` naming the spellings for another."""
    return _TARGET[arch_name(model)]
