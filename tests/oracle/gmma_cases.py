"""Oracle cases for the SM90 warpgroup MMA atoms (``mma_traits_sm90_gmma.hpp`` and its ``_ext``): each atom's traits
(``ThrID``, ``Shape_MNK``, ``ALayout``, ``BLayout``, ``CLayout``) against ``warpsim.cute.gmma_op``."""

from oracle_harness import CaseGroup, OracleCase

INCLUDES = ("cute/tensor.hpp", "cute/atom/mma_traits_sm90_gmma.hpp", "cute/arch/mma_sm90_gmma_ext.hpp",
            "cute/atom/mma_traits_sm90_gmma_ext.hpp")
MAJOR = {"K": "GMMA::Major::K", "MN": "GMMA::Major::MN"}


def cases():
    out = []
    for n in (8, 24, 64, 128, 256):
        for types in ("F32F16F16", "F32BF16BF16", "F16F16F16"):
            for kind, majors in (("SS", ("K", "K")), ("SS", ("K", "MN")), ("SS", ("MN", "MN")), ("RS", ("K", "MN"))):
                name = f"SM90_64x{n}x16_{types}_{kind}"
                cpp_op = f"{name}<{MAJOR[majors[0]]}, {MAJOR[majors[1]]}>"
                py_op = f"gmma_op({name!r}, {majors[0]!r}, {majors[1]!r})"
                base = f"gmma/{name}/{majors[0]}{majors[1]}"
                for member in ("ALayout", "BLayout", "CLayout"):
                    out.append(OracleCase(f"{base}/{member}", f"typename MMA_Traits<{cpp_op}>::{member}{{}}",
                                          f"{py_op}.{member}"))
                out.append(OracleCase(f"{base}/ThrID", f"typename MMA_Traits<{cpp_op}>::ThrID{{}}", f"{py_op}.ThrID"))
                out.append(OracleCase(f"{base}/Shape_MNK", f"typename MMA_Traits<{cpp_op}>::Shape_MNK{{}}",
                                      f"{py_op}.Shape_MNK"))
    # the K-major-only types: tf32 (k8), fp8 (k32, mixed too), 8-bit integers (k32); fp8/tf32 atoms are templates
    # of their input scales, the integer ones are not
    for n in (8, 64, 256):
        for types, k, template in (("F32TF32TF32", 8, True), ("F32E4M3E5M2", 32, True), ("F16E5M2E4M3", 32, True),
                                   ("S32U8S8", 32, False)):
            for kind in ("SS", "RS"):
                name = f"SM90_64x{n}x{k}_{types}_{kind}_TN"
                cpp_op = f"{name}<>" if template else name
                py_op = f"gmma_op({name!r})"
                for member in ("ALayout", "BLayout", "CLayout", "ThrID", "Shape_MNK"):
                    out.append(OracleCase(f"gmma/{name}/{member}", f"typename MMA_Traits<{cpp_op}>::{member}{{}}",
                                          f"{py_op}.{member}"))
    return out


def groups():
    return [CaseGroup("gmma", cases(), includes=INCLUDES)]
