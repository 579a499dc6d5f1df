"""The benchmarks' one timing rule: ``timed(fn, repeat, clock)`` = (best, median) of ``repeat`` runs of ``fn()``
after 2 warm-up runs (the kernel compiled, parsed and decoded, caches warm), by ``clock``
(``time.perf_counter``: wall time; ``time.process_time``: this process's CPU time, which other work on a shared
machine does not inflate).

>>> best, median = timed(lambda: None, 3)
>>> 0 <= best <= median
True
"""

import time

__all__ = ["timed"]


def timed(fn, repeat, clock=time.perf_counter):
    """``(best, median)`` seconds of ``fn()`` over ``repeat`` runs after 2 warm-up runs."""
    times = []
    for k in range(repeat + 2):
        start = clock()
        fn()
        if k >= 2:
            times.append(clock() - start)
    times.sort()
    return times[0], times[len(times) // 2]
