"""The four families weak bisimulation is measured on (issue 36 item 3), each of ``n``
states, deterministic, and what each is checked against.

* ``tau_chain``: ``0 -τ-> 1 -τ-> … -τ-> n-2``, every chain state ``-a->`` the sink
  ``n-1`` (no state is ``τ.P``: nothing merges; τ*(i) is the rest of the chain);
* ``tau_ring``: a τ-cycle over ``0..n-2`` and ``a`` from one ring state into the sink;
* ``two_cycles``: a chain of τ-2-cycles ``2i <-τ-> 2i+1``, ``2i+1 -τ-> 2i+2``, each
  cycle's ``2i -a->`` the sink (visible exits all the way down the chain);
* ``random_tau``: out-degree 1–3 per state, targets uniform, each transition τ with
  probability 0.8, else one of ``a0``–``a3`` (seeded).

The first three are each weakly ``a.0`` (checked against ``0 -a-> 1``: equivalent); a
random system is checked against ``0 -a0-> 1`` (not equivalent: the distinguishing
trace is searched as well).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from sim.calculus.lts import LTS, TAU

SEED = 20_261_207
SPEC = LTS(2, 0, [(0, "a", 1)])
RANDOM_SPEC = LTS(2, 0, [(0, "a0", 1)])


def tau_chain(n: int) -> LTS:
    """A τ-chain of ``n - 1`` states, each with an ``a`` into the sink ``n - 1``."""
    k = n - 1
    trans = [(i, TAU, i + 1) for i in range(k - 1)]
    trans += [(i, "a", k) for i in range(k)]
    return LTS(n, 0, trans)


def tau_ring(n: int) -> LTS:
    """A τ-cycle over ``0..n-2`` and a sink ``n-1`` entered by ``a`` from one ring state."""
    k = n - 1
    trans = [(i, TAU, (i + 1) % k) for i in range(k)]
    trans.append((k // 2, "a", k))
    return LTS(n, 0, trans)


def two_cycles(n: int) -> LTS:
    """A chain of ``(n - 1) // 2`` τ-2-cycles, each with an ``a`` into the sink ``n - 1``."""
    pairs = (n - 1) // 2
    sink = n - 1
    trans: list[tuple[int, str, int]] = []
    for i in range(pairs):
        x, y = 2 * i, 2 * i + 1
        trans += [(x, TAU, y), (y, TAU, x), (x, "a", sink)]
        if i + 1 < pairs:
            trans.append((y, TAU, x + 2))
    return LTS(n, 0, trans)


def random_tau(n: int, seed: int = SEED) -> LTS:
    """A random system of ``n`` states, 80 % of its transitions τ (see the module)."""
    rng = random.Random(seed)
    trans: list[tuple[int, str, int]] = []
    for s in range(n):
        for _ in range(rng.randint(1, 3)):
            lab = TAU if rng.random() < 0.8 else f"a{rng.randrange(4)}"
            trans.append((s, lab, rng.randrange(n)))
    return LTS(n, 0, trans)


#: name: (generator, what it is checked against, equivalent?)
FAMILIES: dict[str, tuple[Callable[[int], LTS], LTS, bool]] = {
    "tau_chain": (tau_chain, SPEC, True),
    "tau_ring": (tau_ring, SPEC, True),
    "two_cycles": (two_cycles, SPEC, True),
    "random_tau": (random_tau, RANDOM_SPEC, False),
}


def measure(family: str, n: int) -> dict[str, object]:
    """One fresh measurement (run it in a child process): CPU seconds of
    ``bisimilar(family(n), its spec)`` (``time.process_time``; SciPy's graph module,
    which the τ-contraction loads on first use, imported before: a once-per-process
    0.3 s that is no part of the growth), the resident set before the call and the
    process's peak after it (MiB), the verdict and the trace."""
    import time

    import scipy.sparse.csgraph  # noqa: F401 - loaded before timing (see above)

    from benchmarks.memory import own_peak_rss, status
    from sim.calculus.bisim import bisimilar

    make, spec, equivalent = FAMILIES[family]
    lts = make(n)
    before = status("VmRSS")
    started = time.process_time()
    result = bisimilar(lts, spec)
    cpu = time.process_time() - started
    trace = list(result.distinction.trace) if result.distinction is not None else None
    return {
        "family": family,
        "states": n,
        "transitions": len(lts.transitions),
        "cpu": cpu,
        "rss_before_mib": before / 2**20,
        "peak_mib": own_peak_rss() / 2**20,
        "equivalent": result.equivalent,
        "expected": equivalent,
        "trace": trace,
    }


if __name__ == "__main__":  # pragma: no cover - the benchmark's child process
    import json
    import sys

    print(json.dumps(measure(sys.argv[1], int(sys.argv[2]))))
