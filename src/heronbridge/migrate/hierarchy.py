"""The tree's class hierarchies as heronpy will call them.

pystorm sets its attributes (`task_id`, `context`, ...) on a component before any
`initialize` runs, and acks a tuple once the outermost `process` returns. heronpy does
neither; it calls the first `initialize` and the first `process` of the class's method
resolution order, and whatever those pass on through `super()` or `Base.m(self, ...)`.
So the rules need, for every component class, the chain of methods heronpy will run:

- the pystorm attributes are set once, at the top of the first method of the chain that
  runs before anything reads them: the first `initialize`, or the one it passes on to
  first thing (`super().initialize(conf, ctx)` as its first statement);
- where a method sets them for one class and is reached through `super()` from another
  class's method that already set them, its assignments are guarded
  (`if type(self).initialize is Base.initialize:`), so each class sets them once;
- a class whose first `initialize` is the library's gets one added (where the tree reads
  the attributes), and one whose first may be an unseen library class's gets one that
  passes config and context on positionally;
- auto-ack, auto-anchor and auto-fail are written into the first `process` (a mixin's
  too), with the flags of the classes that run it; a `process` reached through
  `super()` from another's acks and fails only when heronpy called it first.

Bases from outside the tree are linearised as opaque classes ("unseen"); the standard
library's and builtins are left out (they define neither method).
"""

from __future__ import annotations

import builtins
import sys
from dataclasses import dataclass, field

from .analysis import (
    AUTO_FLAGS,
    BOLT,
    COMPONENTS,
    SPOUTS,
    STORM_BASIC_BOLT,
    STORM_PY,
    ClassInfo,
    Index,
    is_library,
    library_symbol,
)
from .attributes import SET_NAMES

LIB = "lib:"  # a linearisation entry that is one of the libraries' classes
UNSEEN = "unseen:"  # a base from outside the tree and the libraries
PYSTORM_PARAMS = ("storm_conf", "context")  # pystorm's initialize(self, storm_conf, context)
_BUILTINS = frozenset(dir(builtins))
BOLTS_ACKED = (BOLT, STORM_BASIC_BOLT)  # the kinds whose process pystorm (or storm.py) acks


@dataclass
class Prelude:
    """The pystorm attributes one class's `initialize` sets."""

    names: set[str] = field(default_factory=set)
    kinds: set[str | None] = field(default_factory=set)
    guarded: bool = False  # only when heronpy called this initialize first
    added: bool = False  # the class has no initialize: the codemod adds one
    calls_super: bool = False  # an added one passes config and context on


@dataclass
class Injection:
    """What one class's `process` writes out of pystorm's loop."""

    flags: dict[str, bool]
    kind: str
    guarded: bool = False  # acks and fails only when heronpy called this process first
    mixed: list[str] = field(default_factory=list)  # classes running it with other flags


@dataclass
class Plan:
    preludes: dict[str, Prelude] = field(default_factory=dict)  # by class
    injections: dict[str, Injection] = field(default_factory=dict)  # by class
    kinds: dict[str, set[str | None]] = field(default_factory=dict)  # class -> kinds of
    # the components whose resolution order holds it (a mixin's too)
    targets: dict[str, set[str]] = field(default_factory=dict)  # class -> what its
    # initialize passes on to: classes, or LIB/UNSEEN entries
    params: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class -> its
    # initialize's positional parameters as written
    unseen: dict[str, list[str]] = field(default_factory=dict)  # class -> the unseen bases
    # it names itself, when it is (or is in) a component

    def related(self, qualified: str) -> bool:
        return qualified in self.kinds


class Hierarchy:
    """Linearisations and method chains over the index."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.classes = {c.qualified: c for m in index.modules.values()
                        for c in m.classes.values()}
        self._mro: dict[str, list[str]] = {}
        self.added: set[str] = set()  # classes given an initialize (pass two)

    def base(self, qualified: str, near: ClassInfo) -> str | None:
        """A base's entry: a class of the tree, LIB/UNSEEN, or None (builtins, stdlib)."""
        symbol = library_symbol(qualified)
        if symbol is not None:
            return LIB + symbol
        if is_library(qualified):
            return LIB + qualified
        found = self.index.find_class(qualified, near.path)
        if found is not None:
            return found.qualified
        head = qualified.split(".", maxsplit=1)[0]
        if ("." not in qualified and qualified in _BUILTINS) or head in sys.stdlib_module_names:
            return None
        return UNSEEN + qualified

    def bases(self, info: ClassInfo) -> list[str]:
        return [b for b in (self.base(q, info) for q in info.bases) if b is not None]

    def mro(self, key: str) -> list[str]:
        """C3 linearisation (a plain depth-first order where C3 has none)."""
        if key in self._mro:
            return self._mro[key]
        info = self.classes.get(key)
        if info is None:
            return [key]
        self._mro[key] = [key]  # a cycle of bases ends here
        bases = self.bases(info)
        seqs = [list(self.mro(b)) for b in bases] + [list(bases)]
        merged = _merge(seqs)
        if merged is None:
            merged = list(dict.fromkeys(e for s in seqs for e in s))
        self._mro[key] = [key, *(e for e in merged if e != key)]
        return self._mro[key]

    def defines(self, key: str, method: str) -> bool:
        info = self.classes.get(key)
        if info is None:
            return True  # LIB and UNSEEN end a chain
        return method in info.methods or (method == "initialize" and key in self.added)

    def first(self, entries: list[str], start: int, method: str) -> str | None:
        return next((k for k in entries[start:] if self.defines(k, method)), None)

    def chain(self, entries: list[str], method: str) -> tuple[list[str], str | None, int]:
        """The tree methods heronpy runs, in order; what ends the chain (LIB, UNSEEN or
        None); and how many of them run before anything reads the component (the
        first, and those each passes on to first thing)."""
        chain: list[str] = []
        hit = self.first(entries, 0, method)
        prefix, first_thing = 0, True
        while hit is not None and hit in self.classes and hit not in chain:
            chain.append(hit)
            if first_thing:
                prefix += 1
            info = self.classes[hit].chained.get(method)
            forward = info.forwards[0] if info is not None and info.forwards else None
            first_thing = first_thing and info is not None and info.forwards_first
            if forward is None:
                return chain, None, prefix
            hit = self._next(entries, hit, forward, method)
        return chain, hit, prefix

    def _next(self, entries: list[str], current: str, forward, method: str) -> str | None:
        if forward.explicit is not None:
            target = self.base(forward.explicit, self.classes[current])
            if target is None:
                return None
            return self.first(self.mro(target), 0, method)
        after = forward.after or current
        if after not in entries:
            found = self.index.find_class(after, self.classes[current].path)
            after = found.qualified if found is not None else after
        return self.first(entries, entries.index(after) + 1, method) \
            if after in entries else None


def plan(index: Index) -> Plan:
    hierarchy = Hierarchy(index)
    result = Plan()
    components = [c for c in hierarchy.classes.values() if index.kind(c) in COMPONENTS]
    read = index.attributes_read
    for info in components:
        kind = index.kind(info)
        for key in hierarchy.mro(info.qualified):
            if key in hierarchy.classes:
                result.kinds.setdefault(key, set()).add(kind)
    for key in result.kinds:
        info = hierarchy.classes[key]
        unseen = [b.removeprefix(UNSEEN) for b in hierarchy.bases(info)
                  if b.startswith(UNSEEN)]
        if unseen:
            result.unseen[key] = unseen
        method = info.chained.get("initialize")
        if method is not None:
            result.params[key] = tuple(method.params)
    _plan_initialize(hierarchy, components, read, result)
    _plan_process(hierarchy, components, result)
    return result


def _wanted(kind: str | None, unseen: bool, context_used: bool, read: set[str]) -> set[str]:
    pystorm = kind not in STORM_PY  # storm.py set none of them, but passed the context
    return {n for n in SET_NAMES if (pystorm and (n in read or unseen))
            or (n == "context" and context_used)}


def _plan_initialize(hierarchy: Hierarchy, components: list[ClassInfo], read: set[str],
                     result: Plan) -> None:
    index = hierarchy.index
    # Pass one: classes whose first initialize is not the tree's get one.
    for info in components:
        entries = hierarchy.mro(info.qualified)
        chain, end, _ = hierarchy.chain(entries, "initialize")
        if chain:
            continue
        unseen = any(e.startswith(UNSEEN) for e in entries)
        wanted = _wanted(index.kind(info), unseen, False, read)
        calls_super = end is not None and end.startswith(UNSEEN)
        if not wanted and not calls_super:
            continue
        host = _host(hierarchy, entries, end) or info.qualified
        prelude = result.preludes.setdefault(host, Prelude(added=True))
        prelude.calls_super = prelude.calls_super or calls_super
        hierarchy.added.add(host)
    # Pass two: every chain, the added methods in it.
    chains: dict[str, tuple[list[str], int, set[str], str | None]] = {}
    for info in components:
        entries = hierarchy.mro(info.qualified)
        chain, end, prefix = hierarchy.chain(entries, "initialize")
        if not chain:
            continue
        for i, key in enumerate(chain):
            target = chain[i + 1] if i + 1 < len(chain) else end
            if target is not None:
                result.targets.setdefault(key, set()).add(target)
        used = any(m.context_used for m in (hierarchy.classes[k].chained.get("initialize")
                                            for k in chain) if m is not None)
        unseen = any(e.startswith(UNSEEN) for e in entries)
        wanted = _wanted(index.kind(info), unseen, used, read)
        if wanted:
            chains[info.qualified] = (chain, prefix, wanted, index.kind(info))
    setter = {d: chain[prefix - 1] for d, (chain, prefix, _, _) in chains.items()}
    guarded: set[str] = set()
    for _ in range(len(chains) + 2):  # each round only moves setters up: it ends
        setting = set(setter.values())
        moved = False
        for chain, _, _, _ in chains.values():
            fired = [k for k in chain if k in setting and (k not in guarded or k == chain[0])]
            for later in fired[1:]:
                guarded.add(later)
        for d, (chain, prefix, _, _) in chains.items():
            fired = [k for k in chain if k in setting and (k not in guarded or k == chain[0])]
            if not fired or chain.index(fired[0]) >= prefix:
                if setter[d] != chain[0]:
                    setter[d] = chain[0]
                    moved = True
        if not moved:
            break
    for d, (_, _, wanted, kind) in chains.items():
        key = setter[d]
        prelude = result.preludes.setdefault(key, Prelude(added=key in hierarchy.added))
        prelude.names |= wanted
        prelude.kinds.add(kind)
        prelude.guarded = key in guarded
    for info in components:  # the added ones' own classes
        entries = hierarchy.mro(info.qualified)
        added = next((k for k in entries if k in hierarchy.added), None)
        if added is not None and info.qualified not in chains:
            prelude = result.preludes[added]
            unseen = any(e.startswith(UNSEEN) for e in entries)
            prelude.names |= _wanted(index.kind(info), unseen, False, read)
            prelude.kinds.add(index.kind(info))
    for key in [k for k, p in result.preludes.items() if not p.names and not p.calls_super]:
        del result.preludes[key]


def _host(hierarchy: Hierarchy, entries: list[str], end: str | None) -> str | None:
    """The class of the tree, before `end` in `entries`, that names `end` as a base:
    where an added initialize serves every class deriving from it."""
    stop = entries.index(end) if end in entries else len(entries)
    for key in reversed(entries[:stop]):
        info = hierarchy.classes.get(key)
        if info is not None and (end is None or end in hierarchy.bases(info)):
            return key
    return None


def _plan_process(hierarchy: Hierarchy, components: list[ClassInfo], result: Plan) -> None:
    index = hierarchy.index
    users: dict[str, list[ClassInfo]] = {}
    inner: set[str] = set()
    for info in components:
        if index.kind(info) not in BOLTS_ACKED:
            continue
        chain, _, _ = hierarchy.chain(hierarchy.mro(info.qualified), "process")
        if chain:
            users.setdefault(chain[0], []).append(info)
            inner.update(chain[1:])
    for key, running in users.items():
        flags = {d.qualified: {f: index.flag(d, f) for f in AUTO_FLAGS} for d in running}
        own = flags.get(key) or flags[running[0].qualified]
        kinds = {index.kind(d) for d in running}
        kind = STORM_BASIC_BOLT if kinds == {STORM_BASIC_BOLT} else BOLT
        result.injections[key] = Injection(own, kind, key in inner,
                                           sorted(d for d, f in flags.items() if f != own))


def spout_only(kinds: set[str | None]) -> bool:
    return bool(kinds) and kinds <= SPOUTS


def _merge(seqs: list[list[str]]) -> list[str] | None:
    out: list[str] = []
    seqs = [s for s in seqs if s]
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(head in s[1:] for s in seqs):
                break
        else:
            return None
        out.append(head)
        seqs = [s[1:] if s[0] == head else s for s in seqs]
        seqs = [s for s in seqs if s]
    return out


def plan_of(index: Index) -> Plan:
    """The tree's class hierarchies as heronpy will call them, made once per index."""
    if index._plan is None:  # noqa: SLF001 - the index carries it to the workers
        index._plan = plan(index)  # noqa: SLF001
    return index._plan  # noqa: SLF001
