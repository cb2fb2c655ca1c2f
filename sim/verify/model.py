"""The untimed model of one workflow instance (SPEC §11): tasks × caller views × choices.

A state is a plain tuple ``(tasks, status, known, latest)``:

* ``tasks``: per task, an int code (``PENDING`` … ``WAITING``) or a tuple:
  ``(PREPARING, need, depth)`` (its route and view not chosen yet; ``need`` None for
  the task's own need, else a fallback tool) or ``(RUNNING, option, gate, lts state,
  phase, resends, depth, pending slots, sent)`` for its current invocation (``sent``:
  an attempt went out, so a dynamic router may reroute the next one);
* ``status``: ``""`` while nothing failed, else (``failed``|``cancelled``, reason), the
  first deciding, when ``exact``, else ``"x"``;
* ``known``: the option ids discovered (no second ``list``); ``latest``: (tool, option
  id learned last) pairs, kept only when some tool declares ``ProducesInputFor``.

Initial state :data:`INIT`, final :data:`END`. A transition is one group of events the
engine writes at one instant, synchronously (``error`` and its recovery), with its task's
index (-1: the instance's). Events: :data:`~sim.verify.states.Event`. The environment
chooses each discovery's route and view (its own ``list``, or with no event the view
the caller learned in an earlier instance), grant or deny, result or each error of non-zero
probability, a timeout before or after execution (always possible: service times,
queueing and outages are abstracted), a failed discovery, and the initiator going down
when a failure can take it down. The caller follows ``sim.engine`` (SPEC §4): the view's
LTS and its one recovery (the steps are :mod:`sim.verify.invocation`'s), readiness
under ≺ and known dependencies (``ProducesInputFor`` through any latest view the caller
can hold, :meth:`Model._fed`), ExclusiveWith skips,
and a failure at once in a batch of ready tasks ending the instance
(:func:`~sim.verify.states.batch_cuts`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sim.approval import approval, make_policy
from sim.calculus.mcp import DISCOVERY_ATTEMPTS, excluders
from sim.mesh.graph import ProtocolGraph
from sim.mesh.registry import make_router
from sim.mesh.routing import Router
from sim.scenario.model import Scenario
from sim.verify.knowledge import (
    MAX_SUSPECT_SETS,
    RouteOption,
    Suspicions,
    ToolModel,
    failed_elements,
    list_events,
    route_options,
    suspicion_sets,
)
from sim.verify.readiness import Readiness
from sim.verify.states import (
    END,
    FAILED,
    INIT,
    INITIATOR_DOWN,
    PENDING,
    PREPARING,
    Event,
    Task,
    Transition,
    active,
    batch_cuts,
    dependents,
    isolated_tasks,
)


class Model(Readiness):
    """One instance of ``workflow`` started by ``initiator`` (default: its first)
    under ``router`` (see the module). ``exact``: keep the instance's status and reason
    in the state (needed when a property reads ``wf_end``; partial-order reduction runs
    without it). ``mesh``: another model of the scenario and router whose graph, router
    and descriptors this one reuses (they do not depend on the initiator).
    ``suspect_sets``: how many of a dynamic router's suspect sets to route under
    (``suspicions.complete`` False when there are more)."""

    def __init__(
        self,
        scenario: Scenario,
        workflow: str,
        router: str,
        initiator: str | None = None,
        exact: bool = True,
        mesh: Model | None = None,
        suspect_sets: int = MAX_SUSPECT_SETS,
    ) -> None:
        wf = next(w for w in scenario.workflows if w.name == workflow)
        self.scenario = scenario
        self.workflow = wf.name
        self.router_name = router
        self.exact = exact
        initiators = scenario.initiators_of(wf)
        self.initiator = initiator if initiator is not None else initiators[0]
        order = {t.id: i for i, t in enumerate(wf.tasks)}
        dialects = scenario.dialects()
        self.tasks = tuple(Task(i, t, wf, order, dialects) for i, t in enumerate(wf.tasks))
        self.graph: ProtocolGraph
        self.router: Router
        if mesh is not None:
            self.graph, self.router = mesh.graph, mesh.router
        else:
            self.graph = ProtocolGraph.from_scenario(scenario)
            self.router = make_router(router, self.graph, scenario)
        self.policy = make_policy(scenario.approval)
        self.mcp_policy = scenario.approval.mcp_policy.value
        self.grant = float(scenario.approval.grant_probability)
        specs = {t.name: t for t in scenario.tools}
        self.truth = (
            mesh.truth if mesh is not None else {n: s.descriptor() for n, s in specs.items()}
        )
        #: the suspect sets the caller's routes avoid (per initiator: its own timeouts)
        self.suspicions: Suspicions
        if mesh is not None and mesh.initiator == self.initiator:
            self.suspicions = mesh.suspicions
        else:
            self.suspicions = suspicion_sets(
                self.router, self.graph, self.initiator, self._called(), self.truth, suspect_sets
            )
        self.excluded_by = excluders(self.truth.values())
        self.errors = {name: dict(s.errors) for name, s in specs.items()}
        self.write = {name: approval(self.truth[name]).demanded for name in specs}
        self.raised = {
            name: tuple(e for e in sorted(errs) if float(errs[e]) > 0)
            for name, errs in self.errors.items()
        }
        self.result_possible = {
            name: sum(float(p) for p in errs.values()) < 1.0 for name, errs in self.errors.items()
        }
        nodes, _ = failed_elements(scenario)
        self.initiator_fails = self.initiator in nodes
        self.options: dict[tuple[str, str], tuple[int, ...]] = {}
        #: every route option, by id (states hold ids; ``known`` holds ids of their keys)
        self.option_list: list[RouteOption] = []
        self._option_ids: dict[tuple[Any, ...], int] = {}
        self._placed: dict[tuple[int, int, bool], tuple[tuple[str, str], ...]] = {}
        self.views: dict[tuple[str, frozenset[str]], ToolModel] = {}
        #: tasks whose outcome no other task reads: with ``exact`` off their final code is
        #: kept as SUCCEEDED (the failure is in ``status``), so outcomes do not multiply
        self.isolated = isolated_tasks(self.tasks, self.truth)
        self._feeding: dict[tuple[str, str], frozenset[bool]] = {}
        self.dependents = dependents(self.tasks)
        #: per view (tool, fields): the tasks its readiness reads (:meth:`_watched`)
        self._watch: dict[tuple[str, frozenset[str]], tuple[int, ...]] = {}
        #: per tool: the tasks whose tool's latest view may say it feeds it (:meth:`_feeders`)
        self._feeders_of: dict[str, tuple[int, ...]] = {}
        self._possible: tuple[frozenset[str], ...] | None = None
        self.feeds_known = any(
            d.relation.value == "ProducesInputFor" for s in specs.values() for d in s.dependencies
        )

    # -- knowledge --

    def _rhos(self) -> list[str]:
        """Every protocol a task of the scenario is issued in, sorted."""
        return sorted({w.rho_of(t) for w in self.scenario.workflows for t in w.tasks})

    def _called(self) -> list[tuple[str | None, str | None, str]]:
        """What the initiator's caller routes to, in every workflow it starts (one
        caller per agent: its suspicions span them): (tool, capability, protocol)."""
        out: list[tuple[str | None, str | None, str]] = []
        for w in self.scenario.workflows:
            if self.initiator in self.scenario.initiators_of(w):
                out.extend((t.tool, t.capability, w.rho_of(t)) for t in w.tasks)
        return out

    def signature(self) -> tuple[Any, ...]:
        """What the model can see that depends on its initiator: whether a failure can
        take it down, and the key of every route option (host, tool, fields, arrival
        protocol, translations) of every tool and of every task's capability, in every
        protocol a task of the scenario speaks (the needs :meth:`options_for` and
        :meth:`_fed` ask for), with the agents' names (the initiator's, the hosts', the
        translating agents') replaced by their order of first appearance. Two initiators
        with the same signature have the same state space up to a one-to-one renaming
        of the agents in the events."""
        rhos = self._rhos()
        needs: list[tuple[str | None, str | None]] = [(name, None) for name in sorted(self.truth)]
        needs += sorted({(None, t.capability) for t in self.tasks if t.capability is not None})
        names: dict[str, int] = {self.initiator: 0}

        def agent(name: str) -> int:
            return names.setdefault(name, len(names))

        keys = tuple(
            tuple(
                (
                    agent(o.host),
                    o.tool,
                    o.fields,
                    o.arrives,
                    tuple(
                        (agent(h.at), h.source, h.target, h.chain, h.dropped, h.kind)
                        for h in o.translations
                    ),
                )
                for o in self._routes(tool, capability, rho)
            )
            for tool, capability in needs
            for rho in rhos
        )
        return (self.initiator_fails, keys)

    def _routes(
        self, tool: str | None, capability: str | None, rho: str
    ) -> tuple[RouteOption, ...]:
        """The options to reach a server of the need from the initiator, under every
        suspect set of its caller (:func:`~sim.verify.knowledge.route_options`)."""
        sets = self.suspicions.sets
        return route_options(self.router, self.graph, sets, self.initiator, tool, capability, rho)

    def options_for(self, task: Task, need: str | None) -> tuple[int, ...]:
        """The route options (ids) of ``task``'s own need (``need`` None) or a fallback."""
        key = (need or task.need, task.rho)
        hit = self.options.get(key)
        if hit is None:
            tool = need if need is not None else task.tool
            capability = None if need is not None else task.capability
            found = self._routes(tool, capability, task.rho)
            hit = self.options[key] = tuple(self._intern(o) for o in found)
        return hit

    def placements(self, task: Task, oid: int, depth: int) -> tuple[tuple[str, str], ...]:
        """Where a re-sent or retried attempt of an invocation over option ``oid`` can be
        served: (host, arrival protocol) of that route and, for a dynamic router (which
        routes each later attempt around the caller's current suspects, keeping it
        where the new route's end does not host the tool: ``sim.engine.caller``), of
        every option of the invocation's need that ends at a host of the same tool. The
        view, and so the gate and the LTS, stay the discovered one's."""
        key = (task.index, oid, depth > 0)
        hit = self._placed.get(key)
        if hit is None:
            option = self.option_list[oid]
            found = [(option.host, option.arrives)]
            for other in self._rerouted(task, option.tool if depth else None, option.tool):
                o = self.option_list[other]
                found.append((o.host, o.arrives))
            hit = self._placed[key] = tuple(dict.fromkeys(found))
        return hit

    def _rerouted(self, task: Task, need: str | None, tool: str) -> tuple[int, ...]:
        """The options of ``task``'s need (or fallback ``need``) a dynamic router can
        reroute a later attempt or a re-sent ``list`` of ``tool`` to: those that end at
        a host of ``tool`` (none for a static router, which keeps the route)."""
        if self.router.static:
            return ()
        return tuple(
            o
            for o in self.options_for(task, need)
            if tool in self.graph.agent(self.option_list[o].host).tools
        )

    def _intern(self, option: RouteOption) -> int:
        k = option.key()
        hit = self._option_ids.get(k)
        if hit is None:
            hit = self._option_ids[k] = len(self.option_list)
            self.option_list.append(option)
        return hit

    def successors(self, state: tuple[Any, ...]) -> list[Transition]:
        """Every transition enabled in ``state``: (task index or -1, events, next state)."""
        if state is END:
            return []
        if state == INIT:
            tasks: tuple[Any, ...] = (PENDING,) * len(self.tasks)
            start = ("wf_start", -1, None, self.initiator, None, ())
            evs, nxt = self._advance([start], list(tasks), "", (), ())
            return [(-1, tuple(evs), nxt)]
        out = self.moves(state, map(self.tasks.__getitem__, active(state[0])))
        if self.initiator_fails:
            out.append((-1, (("wf_end", -1, None, self.initiator, None, INITIATOR_DOWN),), END))
        return out

    def moves(self, state: tuple[Any, ...], tasks: Iterable[Task]) -> list[Transition]:
        """The transitions of ``tasks`` (each preparing or running in ``state``, a state
        other than INIT and END), task by task in the order given."""
        codes = state[0]
        out: list[Transition] = []
        for task in tasks:
            ts = codes[task.index]
            if ts[0] == PREPARING:
                first = len(out)
                self._discover(state, task, ts, out)
                out.extend(batch_cuts(out[first:], task.index, self.initiator, self.exact))
            else:
                self._step(state, task, ts, out)
        return out

    def _discover(self, state: tuple[Any, ...], task: Task, ts: Any, out: list[Transition]) -> None:
        """The steps of a task's discovery: ``ts`` is ``(PREPARING, need, depth)``, or
        with ``(…, resent, first)`` while its own ``list`` exchange, first over option
        ``first``, has been re-sent ``resent`` times."""
        need = ts[1]
        _tasks, _status, known, latest = state
        options = self.options_for(task, need)
        if not options:
            out.append((task.index, *self._over(state, task, FAILED, "no_route", [])))
            return
        fresh = ts[:3]
        if len(ts) > 3:  # the exchange in progress: its reply, a re-send or the give-up
            resent, first = ts[3], ts[4]
            self._exchange(state, task, fresh, first, resent, out)
            return
        unknown = False
        for oid in options:
            if oid in known:
                self._discovered(state, task, ts, oid, [], known, latest, out)
                continue
            unknown = True
            # this instance's own `list` exchange, or (no event, at once) the caller's
            # view from an earlier instance: views outlive instances (engine discovery)
            self._exchange(state, task, fresh, oid, 0, out)
            self._discovered(state, task, ts, oid, [], *self._learned(state, oid), out)
        if unknown:
            # the exchange that gave up was another instance's (its events are in that one)
            out.append((task.index, *self._over(state, task, FAILED, "discovery_timeout", [])))

    def _exchange(
        self,
        state: tuple[Any, ...],
        task: Task,
        fresh: Any,
        first: int,
        resent: int,
        out: list[Transition],
    ) -> None:
        """This instance's ``list`` exchange, first sent over option ``first`` and re-sent
        ``resent`` times: the reply (over ``first`` or, for a dynamic router, which
        re-routes a re-send around the caller's suspects, over any option of the need
        to a host of the same tool: the view is the one of the path the reply took),
        a re-send (``timeout``, ``resend``) or, after the last attempt, the give-up."""
        tool = self.option_list[first].tool  # what the engine resolved at the first path
        replies = (self._rerouted(task, fresh[1], tool) or (first,)) if resent else (first,)
        for oid in replies:
            evs = self._list_events(task, self.option_list[oid])
            self._discovered(state, task, fresh, oid, evs, *self._learned(state, oid), out)
        if resent + 1 < DISCOVERY_ATTEMPTS:
            again = self._ev("timeout", task, tool, ("action", "resend"), ("kind", "list"))
            nxt = self._with(state, task, (*fresh, resent + 1, first))
            out.append((task.index, (again,), nxt))
        else:
            fail = self._ev("timeout", task, tool, ("action", "give_up"), ("kind", "list"))
            out.append((task.index, *self._over(state, task, FAILED, "discovery_timeout", [fail])))

    def _learned(self, state: tuple[Any, ...], oid: int) -> tuple[tuple[int, ...], tuple[Any, ...]]:
        """``known`` and ``latest`` once option ``oid``'s view is learned."""
        known, latest = state[2], state[3]
        k2 = tuple(sorted({*known, oid}))
        if self.feeds_known:
            latest = tuple(sorted({**dict(latest), self.option_list[oid].tool: oid}.items()))
        return k2, latest

    def _discovered(
        self,
        state: tuple[Any, ...],
        task: Task,
        ts: Any,
        oid: int,
        evs: list[Event],
        known: tuple[int, ...],
        latest: tuple[Any, ...],
        out: list[Transition],
    ) -> None:
        """The view of option ``oid`` is known after ``evs``: go on as the engine does."""
        st = self._with(state, task, ts, known=known, latest=latest)
        if ts[2] == 0:
            self._ready(st, task, oid, evs, out)
        else:
            evs_t, nxt = self._invoke(st, task, oid, ts[2], evs)
            out.append((task.index, evs_t, nxt))

    def _list_events(self, task: Task, option: RouteOption) -> list[Event]:
        view = self.view(option).view
        return list_events(option, view, task.index, self.initiator, task.rho)

    def _feed_values(self, other: str, me: str) -> frozenset[bool]:
        """What the views of ``other`` the caller can learn say of feeding ``me``."""
        values = self._feeding.get((other, me))
        if values is None:
            rhos = self._rhos()
            found = [o for rho in rhos for o in self._routes(other, None, rho)]
            for t in self.tasks:
                if t.capability is not None:
                    options = (self.option_list[o] for o in self.options_for(t, None))
                    found.extend(o for o in options if o.tool == other)
            values = frozenset(me in self.view(o).feeds for o in found)
            self._feeding[(other, me)] = values
        return values
