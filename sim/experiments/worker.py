"""What a worker keeps between the replications it runs: the scenario, its graph, its
routers, its topology, the checks' ground truth and the page's mesh.

A task sent to a process pool carries the path of its scenario's pickle and the
scenario's fingerprint instead of the scenario: the worker finds it in memory when it
was forked after the parent noted it (:func:`remember`; no pickle is written then), else
loads each scenario once (:func:`load_scenario`) from the pickle :func:`ship` writes
once per scenario and experiment. Per scenario fingerprint a worker also keeps (:func:`built`)
the protocol graph; the built-in routers built on it, whose caches (state spaces,
trees, routes) depend on the graph only, which no run changes (a plug-in router is
built per replication, as ``run`` does); the run-time topology, each replication
getting a fresh copy (its trace encodings built once); the checks' ground truth (the
tools' LTSs compiled once); the explorer's mesh the page fragments are built on.
Kept per thread (Dask may run tasks in threads), one scenario at a time (a Dask
worker's: the :data:`BUILT_MOST` used last); a process pool's worker builds it all at
once and freezes it out of its garbage collector, and so do a Dask worker in a process
of its own (:func:`on_cluster`) and a process running its runs itself (``run``,
``compare --jobs 1``: :func:`running_inline`), once per scenario: else every run of a
large world would make a full collection walking all the worker holds (0.2 s a run on
the 10,000-agent mesh). At trace level off nothing reads the trace: neither the ground
truth nor the page's mesh is built. None of it changes a run's bytes: replication ``k``
writes what ``run`` writes for it (tested), whatever the executor and job count.

A Dask worker holds the scenarios its client hands over (:func:`hold`) by fingerprint
across commands (a cluster outlives them): a task names its scenario by fingerprint only
(:func:`held_scenario`), and a later command of the same scenario sends nothing.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.experiments.series import series_of_run
from sim.longlived import freeze, is_frozen, unfreeze
from sim.mesh.graph import ProtocolGraph
from sim.mesh.routing import Router
from sim.scenario.model import Scenario

if TYPE_CHECKING:
    from sim.conformance.truth import Truth
    from sim.engine import World
    from sim.engine.topology import Topology
    from sim.view.mesh import Mesh

#: the scenario pickles loaded in this process, by (path, fingerprint)
_LOADED: dict[tuple[str, str], Scenario] = {}
#: how this process keeps what :func:`built` builds: "" (nothing frozen: the engine
#: freezes a large world for its run), "pool" (a process pool's worker,
#: :func:`pool_worker_start`: frozen to its end), "cluster" (a Dask worker in a process
#: of its own, :func:`on_cluster`: frozen until it forgets one of the :data:`BUILT_MOST`
#: it keeps) or "inline" (a process running its runs itself, :func:`running_inline`:
#: frozen until its next scenario)
_KEEPS: list[str] = [""]
_LOCK = threading.Lock()
#: per thread: the scenario built last, by fingerprint
_LOCAL = threading.local()
#: the scenarios this process holds for a Dask client's tasks (:func:`hold`), by
#: fingerprint, the least recently used first
_HELD: OrderedDict[str, Scenario] = OrderedDict()
#: how many scenarios a worker holds at most; more while one command hands over more (all of
#: its own are held): a 10,000-agent scenario is about 30 MB in memory, 2.6 MB pickled
HELD_MOST = 4
#: how many scenarios' :class:`Built` a Dask worker's thread keeps (the least recently used
#: forgotten first): a cluster serves commands of several scenarios in turn (a variant and
#: its base, sweep points), and each rebuilt one cost a worker 1.1 s on the 10,000-agent
#: mesh (graph, topology, truth, page mesh, a full collection); about 28 MB each there.
#: Other processes keep one (their command's scenario, one at a time)
BUILT_MOST = HELD_MOST


def ship(scenarios: dict[str, Scenario], folder: Path) -> dict[str, str]:
    """Write each scenario (by fingerprint) to ``folder`` once; its path, by fingerprint."""
    folder.mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}
    for fp, scenario in scenarios.items():
        path = folder / f"{fp}.pickle"
        path.write_bytes(pickle.dumps(scenario, protocol=pickle.HIGHEST_PROTOCOL))
        paths[fp] = str(path)
    return paths


def in_memory(scenarios: dict[str, Scenario]) -> dict[str, str]:
    """Names in place of :func:`ship`'s paths, by fingerprint, for workers that will find
    the scenarios in memory (forked after :func:`remember`): nothing is written (a
    10,000-agent scenario's pickle costs 0.1-0.2 s) and no file or folder is left behind
    when the process is killed. No file has such a name."""
    return {fp: f"<in memory of process {os.getpid()}>/{fp}.pickle" for fp in scenarios}


def remember(path: str, fp: str, scenario: Scenario) -> None:
    """Note ``scenario`` as the one shipped to ``path``: a worker forked after this finds
    it in memory (a spawned one loads the file)."""
    with _LOCK:
        _LOADED[(path, fp)] = scenario


def forget(files: dict[str, str]) -> None:
    """Drop what :func:`remember` noted for ``files`` (fingerprint → path)."""
    with _LOCK:
        for fp, path in files.items():
            _LOADED.pop((path, fp), None)


def load_scenario(path: str, fp: str) -> Scenario:
    """The scenario shipped to ``path`` (loaded once per process and fingerprint)."""
    with _LOCK:
        hit = _LOADED.get((path, fp))
        if hit is None:
            hit = pickle.loads(Path(path).read_bytes())
            if not isinstance(hit, Scenario):
                raise TypeError(f"{path} does not hold a scenario")
            _LOADED.clear()  # one experiment at a time per worker
            _LOADED[(path, fp)] = hit
        return hit


class ScenarioNotHeld(LookupError):
    """A task named (by fingerprint) a scenario its worker does not hold: the worker joined
    the cluster, or was restarted, after its client handed the scenario over."""

    def __init__(self, fp: str) -> None:
        super().__init__(f"this worker does not hold the scenario with fingerprint {fp}")
        self.fingerprint = fp

    def __reduce__(self) -> tuple[type[ScenarioNotHeld], tuple[str]]:
        return (ScenarioNotHeld, (self.fingerprint,))


def holding(fps: Sequence[str]) -> list[str]:
    """Which of the fingerprints ``fps`` this process holds a scenario of (:func:`hold`),
    each made the most recently used. Run on every Dask worker by the client."""
    with _LOCK:
        found = [fp for fp in fps if fp in _HELD]
        for fp in found:
            _HELD.move_to_end(fp)
        return found


def hold(blobs: Mapping[str, bytes], keep: Collection[str]) -> None:
    """Hold each scenario pickled in ``blobs`` under its fingerprint (the key: the
    client's :func:`~sim.experiments.runner.fingerprint` of what it pickled), then forget
    the least recently used beyond :data:`HELD_MOST`, never one of ``keep`` (the
    fingerprints of the command handing them over). Run on a Dask worker by the client."""
    scenarios = {fp: pickle.loads(blob) for fp, blob in blobs.items()}
    for fp, scenario in scenarios.items():
        if not isinstance(scenario, Scenario):
            raise TypeError(f"the blob under {fp} does not hold a scenario")
    with _LOCK:
        for fp, scenario in scenarios.items():
            _HELD[fp] = scenario
            _HELD.move_to_end(fp)
        spare = [fp for fp in _HELD if fp not in keep]  # the least recently used first
        for fp in spare[: max(0, len(_HELD) - max(HELD_MOST, len(keep)))]:
            del _HELD[fp]


def held_scenario(fp: str) -> Scenario:
    """The scenario with fingerprint ``fp`` this process holds (:func:`hold`); raises
    :class:`ScenarioNotHeld` when it holds none."""
    with _LOCK:
        hit = _HELD.get(fp)
    if hit is None:
        raise ScenarioNotHeld(fp)
    return hit


@dataclass
class Built:
    """A scenario's protocol graph, the built-in routers built on it and its run-time
    topology, in one worker."""

    scenario: Scenario
    graph: ProtocolGraph
    routers: dict[str, Router] = field(default_factory=dict)
    _topology: Topology | None = None
    _page: tuple[Mesh, str] | None = None
    _digest: str | None = None
    _truth: Truth | None = None
    _settled: bool = False

    def settle(self, collect: bool = False, checked: bool = True, drawn: bool = True) -> None:
        """Build what the runs read now (:meth:`prepare`) and freeze it (with all this
        process holds) out of the garbage collector (:func:`gc.freeze`): kept for every
        replication, it is never walked by the collections each run makes. For a process
        that keeps it (a pool worker, where nothing else is built yet; ``collect``: a
        long-lived Dask worker, or a process running its runs itself after an earlier
        scenario, collected in full first so that no garbage is frozen). Once."""
        if self._settled:
            return
        self._settled = True
        self.prepare(checked, drawn)
        if collect:
            gc.collect()
        freeze()

    def prepare(self, checked: bool = True, drawn: bool = True) -> None:
        """Build the topology now and, when the runs' traces are ``checked`` (a level that
        writes lines), the truth (and the checks' trace decoder with the scenario's names,
        which the checks cache per process) and the page's mesh, laid out when ``drawn``
        (``compare`` draws it); kept long: never scanned by the collector while built,
        :func:`sim.longlived.long_lived`."""
        from sim.longlived import long_lived

        with long_lived():
            if checked:
                from sim.conformance.events import interning_decoder
                from sim.conformance.truth import known_values

                interning_decoder(known_values(self.truth()))
                mesh, _ = self.page()
                if drawn:
                    mesh.lay_out()
            self._kept_topology()

    def truth(self) -> Truth:
        """The checks' ground truth of the scenario (:mod:`sim.conformance.truth`), built once."""
        if self._truth is None:
            from sim.conformance.truth import from_scenario

            self._truth = from_scenario(self.scenario)
        return self._truth

    def page(self) -> tuple[Mesh, str]:
        """The explorer's mesh of the scenario (laid out when first drawn) and
        :meth:`digest`, built once."""
        if self._page is None:
            from sim.view.mesh import mesh_from_scenario

            self._page = (mesh_from_scenario(self.scenario), self.digest())
        return self._page

    def digest(self) -> str:
        """The scenario's digest a page fragment is checked with
        (:func:`sim.view.fragment.scenario_digest`), computed once."""
        if self._digest is None:
            from sim.view.fragment import scenario_digest

            self._digest = scenario_digest(self.scenario)
        return self._digest

    def topology(self) -> Topology:
        """A fresh run-time topology of the graph (one never run: its copy is built once)."""
        return self._kept_topology().fresh()

    def _kept_topology(self) -> Topology:
        """The topology never run, that :meth:`topology` copies (built once)."""
        if self._topology is None:
            from sim.engine.topology import Topology

            self._topology = Topology(self.graph)
        return self._topology

    def router(self, name: str) -> Router | None:
        """The built-in router ``name`` built once on the graph, or None for a plug-in
        (built per replication): :func:`sim.mesh.registry.kept_router`."""
        from sim.mesh.registry import kept_router

        return kept_router(self.routers, name, self.graph, self.scenario)


def pool_worker_start(parent: int) -> None:
    """Initializer of a process pool's worker of process ``parent``
    (:func:`sim.processes.worker_start`), noting that what it keeps lives as long as it."""
    from sim.processes import worker_start

    _KEEPS[0] = "pool"
    worker_start(parent)


def on_cluster(client: int, fn: Callable[..., Any], /, *args: Any) -> Any:
    """``fn(*args)`` as a Dask task submitted by process ``client``: a worker in a
    process of its own (not ``client``'s, as an in-process cluster's threads are) keeps
    what :func:`built` builds frozen out of its collector, until it forgets one."""
    if os.getpid() != client:
        _KEEPS[0] = "cluster"
    return fn(*args)


def built(scenario: Scenario, fp: str, checked: bool = True) -> Built:
    """What this thread built for the scenario with fingerprint ``fp`` (built on first use;
    an empty ``fp`` is never cached; a Dask worker's thread keeps :data:`BUILT_MOST`, others
    one). In a process pool's worker, a cluster's and a process running its runs itself
    (:func:`running_inline`) what the runs read is built at once (:meth:`Built.settle`;
    ``checked``: the runs' traces are read, at a level that writes lines)."""
    cache: OrderedDict[str, Built] | None = getattr(_LOCAL, "built", None)
    if cache is None:
        cache = _LOCAL.built = OrderedDict()
    hit = cache.get(fp) if fp else None
    keeps = _KEEPS[0]
    dropped = False  # the last scenario's, unfrozen: garbage to collect before a freeze
    if hit is None:  # the fingerprint names the scenario's every byte
        if fp:
            most = BUILT_MOST if keeps == "cluster" else 1
            full = len(cache) >= most
            while len(cache) >= most:  # the least recently used first
                cache.popitem(last=False)
            # what the forgotten one froze is collected as usual again
            dropped = full and (keeps == "cluster" or (keeps == "inline" and is_frozen()))
            if dropped:
                unfreeze()
        hit = Built(scenario, ProtocolGraph.from_scenario(scenario))
        if fp:
            cache[fp] = hit
    elif fp:
        cache.move_to_end(fp)
    if fp and keeps:  # also what a forked worker found built by its parent
        collect = keeps == "cluster" or (keeps == "inline" and dropped)
        hit.settle(collect, checked, drawn=keeps != "inline")
    return hit


@contextlib.contextmanager
def running_inline(inline: bool = True) -> Iterator[None]:
    """When ``inline`` (this process runs its runs itself: ``run``, ``compare --jobs 1``,
    the inline executor), in the block what :func:`built` builds for a scenario is built
    at once and frozen out of the collector with all the process holds, once per
    scenario (as a cluster worker's: the next scenario unfreezes it, collected in full
    first), instead of the engine's full collection and freeze before each run of a
    large world (0.05 s a replication on the 1,000-agent mesh, 0.15 s on the
    10,000-agent one). Unfrozen at the end. Nothing changes when not ``inline``, when
    this process keeps what it builds already, or froze its heap. A plain block around
    the runs' loop, not inside a generator: it ends when the loop does, whatever raised."""
    if not inline or _KEEPS[0] or is_frozen():
        yield
        return
    _KEEPS[0] = "inline"
    try:
        yield
    finally:
        _KEEPS[0] = ""
        if is_frozen():
            unfreeze()


def kept_page(scenario: Scenario, fp: str) -> tuple[Mesh, str] | None:
    """The page's mesh and digest of ``scenario`` (fingerprint ``fp``) when this thread
    keeps what it built for it (:func:`built`: the runs it ran, or the parent of forked
    workers), else None (nothing is built)."""
    cache: dict[str, Built] | None = getattr(_LOCAL, "built", None)
    hit = cache.get(fp) if cache is not None and fp else None
    return hit.page() if hit is not None and hit.scenario is scenario else None


def run_series(world: World, level: str, scenario: Scenario, rep: int) -> dict[str, Any]:
    """The ``series.json`` object of a run just finished at trace ``level``, from the
    engine's counters (no trace read)."""
    return series_of_run(world.metrics, level, scenario, rep, world.topology.hops_by_link())
