"""Overloads a lower module of ``warpsim.cute`` calls but a higher one defines, registered by name.

CuTe C++ adds the ``ComposedLayout`` overloads of ``composition``, ``right_inverse``,
``logical_product``... in ``include/cute/layout_composed.hpp``, above the plain-layout algebra that
never names them. Here the same: :mod:`warpsim.cute.composed` registers its implementations with
:func:`overload`, and ``algebra``, ``tiling`` and ``layout`` look them up with :func:`overloaded`
when an argument is a swizzle or a composed layout. ``Layout``'s convenience methods
(``compose``, ``with_shape``, ``tile``) reach ``composition`` and ``tiled_divide`` the same way.
No module of this package imports one above it.

Every registration runs when ``warpsim.cute`` is imported (the package imports every module).

>>> overloaded("composition").__module__
'warpsim.cute.algebra'
>>> overloaded("frobnicate")
Traceback (most recent call last):
  ...
LookupError: warpsim.cute: no overload 'frobnicate' is registered (import warpsim.cute to load them all)
>>> overload("composition")(lambda lhs, rhs: None)
Traceback (most recent call last):
  ...
ValueError: warpsim.cute: overload 'composition' is registered twice (warpsim.cute.algebra and warpsim.cute.overloads)
"""

__all__ = ["overload", "overloaded"]

_IMPLEMENTATIONS = {}          # name -> function


def overload(name):
    """Decorator: register the decorated function as the implementation of ``name``; returns it unchanged.

    Pre-condition: ``name`` is not registered yet (``ValueError`` otherwise: one implementation each).
    """
    def register(function):
        if name in _IMPLEMENTATIONS:
            raise ValueError(f"warpsim.cute: overload {name!r} is registered twice "
                             f"({_IMPLEMENTATIONS[name].__module__} and {function.__module__})")
        _IMPLEMENTATIONS[name] = function
        return function
    return register


def overloaded(name):
    """The function registered as ``name``; ``LookupError`` if none is."""
    try:
        return _IMPLEMENTATIONS[name]
    except KeyError:
        raise LookupError(f"warpsim.cute: no overload {name!r} is registered "
                          f"(import warpsim.cute to load them all)") from None
