"""The seeds of a call: each an unsigned 64-bit integer, none repeated, at most
:data:`MAX_RUNS` of them (:func:`check_seeds`), and the most runs of a sweep
(:data:`MAX_SWEEP_RUNS`). Re-exported by :mod:`vtlab.api`."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable
from typing import Any

__all__ = ["MAX_RUNS", "MAX_SEED", "MAX_SWEEP_RUNS", "check_seed", "check_seeds"]

#: Largest accepted seed (seeds are unsigned 64-bit integers).
MAX_SEED = 2**64 - 1

#: Most runs one call makes: seeds of :func:`run_many`, runs of a sweep
#: (:class:`vtlab.sweep.Sweep`: grid points × seeds), ``--runs`` of the command line.
#: A run held in memory costs about 20 kB (a small scenario's rows and metadata), so
#: the largest call holds a few gigabytes at most.
MAX_RUNS = 100_000

#: Most runs of one sweep (:class:`vtlab.sweep.Sweep`: grid points × seeds, each
#: axis at most this many values). A sweep's points cost about 200 B each (the
#: 115 200 of ``vtlab study iso15118``: 23 MB; the points of one grid point share its
#: scenario), so a million take about 200 MB before any run; into a store with
#: ``collect=False`` it then holds no more than a store part. A collected sweep holds
#: its rows: 4.3 kB a run of a 30-minute ISO 15118 session with message counts.
MAX_SWEEP_RUNS = 1_000_000


def check_seed(seed: Any) -> int:
    """Return ``seed`` as an ``int`` if it is a valid unsigned 64-bit seed.

    Raises ``ValueError`` for a negative or too large seed and ``TypeError`` for a
    non-integer (``bool`` and ``float`` are rejected too).
    """
    if isinstance(seed, bool):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    try:
        value = operator.index(seed)
    except TypeError:
        raise TypeError(f"seed must be an integer, got {seed!r}") from None
    if value < 0:
        raise ValueError(f"seed must be non-negative (0 to 2**64-1), got {value}")
    if value > MAX_SEED:
        raise ValueError(f"seed must fit in 64 bits (at most {MAX_SEED}), got {value}")
    return value


def check_seeds(seeds: Iterable[Any], what: str = "seeds") -> list[int]:
    """The seeds of one call as a list, each checked (:func:`check_seed`).

    Refuses no seed, a seed given twice (its run would count twice in every mean
    and confidence interval) and more than :data:`MAX_RUNS` seeds (read no further
    than one past the limit, so an endless iterator is refused too). ``what`` names
    the argument in the messages.
    """
    seed_list = [check_seed(s) for s in itertools.islice(seeds, MAX_RUNS + 1)]
    if len(seed_list) > MAX_RUNS:
        raise ValueError(f"{what}: more than {MAX_RUNS} seeds (the most runs of one call)")
    if not seed_list:
        raise ValueError(f"{what}: needs at least one seed")
    seen: set[int] = set()
    for seed in seed_list:
        if seed in seen:
            raise ValueError(
                f"{what}: seed {seed} is given more than once (its run would count twice)"
            )
        seen.add(seed)
    return seed_list
