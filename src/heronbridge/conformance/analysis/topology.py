"""plan.json as the checks need it: components, stream fields and subscriptions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heronbridge.runtime.config import EFFECTIVELY_ONCE

from .. import ConformanceError, plan_file

KEYED = ("fields", "global")  # groupings that send one key to one task


@dataclass(frozen=True)
class Subscription:
    """One input of one bolt: `target` reads `source`'s `stream` through `grouping`."""

    number: int  # position in the topology's subscriptions, the join key in Spark
    source: str
    stream: str
    target: str
    grouping: str
    fields: tuple[str, ...]
    key_index: tuple[int, ...]  # positions of `fields` in the stream's declared fields

    @property
    def subject(self) -> str:
        where = self.source if self.stream == "default" else f"{self.source}/{self.stream}"
        how = " ".join([self.grouping, ",".join(self.fields)]).strip()
        return f"{where} -> {self.target} ({how})"


@dataclass(frozen=True)
class Topology:
    name: str
    reliable: bool
    kinds: dict[str, str]  # component -> "spout" | "bolt"
    streams: dict[str, dict[str, tuple[str, ...]]]  # component -> stream -> fields
    subscriptions: tuple[Subscription, ...]
    mode: str | None = None  # the runtime's reliability mode, when the topology sets one

    @property
    def effectively_once(self) -> bool:
        """The runtime checkpoints and rolls back (Storm ignores the key)."""
        return self.mode == EFFECTIVELY_ONCE

    @property
    def spouts(self) -> list[str]:
        return sorted(c for c, kind in self.kinds.items() if kind == "spout")

    @property
    def bolts(self) -> list[str]:
        return sorted(c for c, kind in self.kinds.items() if kind != "spout")


def load(run_dir: Path) -> Topology:
    try:
        plan = plan_file.read(run_dir)
    except (OSError, json.JSONDecodeError) as exc:
        msg = (f"run {str(run_dir)!r}: expected a readable {plan_file.PLAN_FILE}, "
               f"received {exc}")
        raise ConformanceError(msg) from exc
    return from_plan(plan)


def from_plan(plan: dict[str, Any]) -> Topology:
    name = str(plan.get("topology", "?"))
    components = plan.get("components") or {}
    kinds = {c: spec.get("kind", "bolt") for c, spec in components.items()}
    streams = {c: {s: tuple(d.get("fields", ())) for s, d in (spec.get("streams") or {}).items()}
               for c, spec in components.items()}
    subs = []
    for target, spec in sorted(components.items()):
        for item in spec.get("inputs") or []:
            source, stream = item["source"], item.get("stream", "default")
            fields = tuple(item.get("fields") or ())
            declared = streams.get(source, {}).get(stream)
            if fields and declared is None:
                msg = (f"topology {name!r}, component {target!r}: expected {source!r} to "
                       f"declare stream {stream!r} for its fields grouping, received "
                       f"streams {sorted(streams.get(source, {}))}")
                raise ConformanceError(msg)
            missing = [f for f in fields if f not in (declared or ())]
            if missing:
                msg = (f"topology {name!r}, component {target!r}: expected grouping fields "
                       f"among {source!r}/{stream!r}'s fields {list(declared or ())}, "
                       f"received {list(fields)}")
                raise ConformanceError(msg)
            subs.append(Subscription(
                number=len(subs), source=source, stream=stream, target=target,
                grouping=item.get("grouping", "shuffle"), fields=fields,
                key_index=tuple((declared or ()).index(f) for f in fields)))
    return Topology(name, bool(plan.get("reliable", True)), kinds, streams, tuple(subs),
                    plan.get("mode"))
