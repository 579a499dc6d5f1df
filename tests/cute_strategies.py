"""Hypothesis strategies for static layouts (shared by the warpsim.cute property tests)."""

from hypothesis import strategies as st

from warpsim.cute import Layout


def _unflat(flat, profile):
    it = iter(flat)

    def build(p):
        return tuple(build(q) for q in p) if isinstance(p, tuple) else next(it)
    return build(profile)


def _leaves(profile):
    return sum(_leaves(p) for p in profile) if isinstance(profile, tuple) else 1


PROFILES = [0, (0,), (0, 0), (0, 0, 0), ((0, 0), 0), (0, (0, 0)), ((0, 0), (0, 0)), (0, 0, 0, 0),
            (((0, 0), 0), 0)]


@st.composite
def shapes(draw, extents=(1, 2, 4, 8), profiles=PROFILES, max_size=256):
    """A shape of the given extents whose size is at most ``max_size``."""
    profile = draw(st.sampled_from(profiles))
    n = _leaves(profile)
    flat = draw(st.lists(st.sampled_from(extents), min_size=n, max_size=n)
                .filter(lambda xs: _prod(xs) <= max_size))
    return _unflat(flat, profile)


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def _flat(t):
    return [x for e in t for x in _flat(e)] if isinstance(t, tuple) else [t]


@st.composite
def layouts(draw, extents=(1, 2, 4, 8), strides=(0, 1, 2, 4, 8, 16, 32), profiles=PROFILES, max_size=256):
    """Any static layout with the given extents and strides."""
    shape = draw(shapes(extents, profiles, max_size))
    n = len(_flat(shape))
    flat = draw(st.lists(st.sampled_from(strides), min_size=n, max_size=n))
    return Layout(shape, _unflat(flat, shape) if isinstance(shape, tuple) else flat[0])


@st.composite
def injective_layouts(draw, extents=(1, 2, 3, 4), gaps=(1, 1, 2, 3), profiles=PROFILES, max_size=128):
    """An injective layout: modes in a random order, each stride a multiple of the span before it."""
    shape = draw(shapes(extents, profiles, max_size))
    flat = _flat(shape)
    order = draw(st.permutations(range(len(flat))))
    strides, cur = [0] * len(flat), 1
    for i in order:
        cur *= draw(st.sampled_from(gaps))
        strides[i] = cur
        cur *= flat[i]
    return Layout(shape, _unflat(strides, shape) if isinstance(shape, tuple) else strides[0])


def compact_layouts(extents=(1, 2, 4, 8), profiles=PROFILES, max_size=256):
    """A bijection onto ``[0, size)``: a compact layout with its modes in a random order."""
    return injective_layouts(extents=extents, gaps=(1,), profiles=profiles, max_size=max_size)
