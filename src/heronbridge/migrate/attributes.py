"""Every attribute pystorm's (and streamparse's) component classes have, and what each
becomes under heronpy.

A streamparse component inherits from pystorm's `Component`, `Bolt`, `Spout`,
`BatchingBolt`, `TicklessBatchingBolt` or `ReliableSpout` what they set in `__init__`
and `_setup_component` and what they define on the class. User code reads and writes
those names; under heronpy each one is:

- SET: heronpy lacks it, so `initialize` sets it to the value pystorm gave it (HB002);
- KEPT: heronpy's class (or heronbridge's extras for batching bolts and ReliableSpout)
  has it, with the same meaning;
- MARKED: nothing gives the same value; every use in a component gets a TODO marker
  (HB005).

tests/migrate/test_attributes.py derives pystorm's list from its classes: a name it
gains that this table does not know fails there.
"""

from __future__ import annotations

from dataclasses import dataclass

from .analysis import BATCHING_BOLT, BOLT, RELIABLE_SPOUT, SPOUT, TICKLESS_BATCHING_BOLT
from .homes import EXTRAS, HELPERS

SET, KEPT, MARKED = "set", "kept", "marked"

# pystorm's classes, each with the kinds of component that inherit from it.
COMPONENT = "Component"
HAVE = {
    COMPONENT: {BOLT, BATCHING_BOLT, TICKLESS_BATCHING_BOLT, SPOUT, RELIABLE_SPOUT},
    BOLT: {BOLT, BATCHING_BOLT, TICKLESS_BATCHING_BOLT},
    BATCHING_BOLT: {BATCHING_BOLT, TICKLESS_BATCHING_BOLT},
    TICKLESS_BATCHING_BOLT: {TICKLESS_BATCHING_BOLT},
    SPOUT: {SPOUT, RELIABLE_SPOUT},
    RELIABLE_SPOUT: {RELIABLE_SPOUT},
}
BATCHING = frozenset({BATCHING_BOLT, TICKLESS_BATCHING_BOLT})


@dataclass(frozen=True)
class Attribute:
    owner: str  # the first of pystorm's classes (as HAVE lists them) that has it
    becomes: str  # SET, KEPT or MARKED
    detail: str  # SET: the value's expression; KEPT: who has it; MARKED: the reason
    kept_in: frozenset[str] = frozenset()  # kinds where a MARKED name is KEPT
    imports: tuple[tuple[str, str | None], ...] = ()  # SET: what the expression needs

    def applies(self, kind: str | None) -> bool:
        return kind in HAVE[self.owner]

    def marked(self, kind: str | None) -> bool:
        return self.becomes == MARKED and self.applies(kind) and kind not in self.kept_in


def _set(owner: str, value: str, *imports: tuple[str, str | None]) -> Attribute:
    return Attribute(owner, SET, value, imports=imports)


def _kept(owner: str, where: str = "heronpy") -> Attribute:
    return Attribute(owner, KEPT, where)


def _marked(owner: str, reason: str, kept_in: frozenset[str] = frozenset()) -> Attribute:
    return Attribute(owner, MARKED, reason, kept_in)


_PROTOCOL = "heronpy has no multilang protocol: this pystorm internal has no equivalent"
_INTERNAL = "pystorm's internal state has no heronpy equivalent"
_AUTO = ("HB003 wrote pystorm's {name} out in process() from the class's flag: setting "
         "or reading it at run time changes nothing under heronpy")

ATTRIBUTES: dict[str, Attribute] = {
    # -- Component: set in __init__ and _setup_component (in pystorm's order) --------------
    "pid": _set(COMPONENT, "os.getpid()", ("os", None)),
    "topology_name": _set(COMPONENT, "context.get_topology_name()"),
    "task_id": _set(COMPONENT, "context.get_task_id()"),
    "component_name": _set(COMPONENT, "context.get_component_id()"),
    "debug": _set(COMPONENT, 'config.get("topology.debug", False)'),
    "storm_conf": _set(COMPONENT, "storm_conf(context)", (HELPERS, "storm_conf")),
    "context": _set(COMPONENT, "storm_context(context)", (HELPERS, "storm_context")),
    "logger": _kept(COMPONENT, "heronpy (a logging.Logger for the component)"),
    "serializer": _marked(COMPONENT, "heronpy has no multilang serializer: pystorm's "
                          "self.serializer has no equivalent"),
    "exit_on_exception": _marked(COMPONENT, "heronpy always ends the task when a "
                                 "component raises: exit_on_exception has no effect"),
    "_pending_commands": _marked(COMPONENT, _PROTOCOL),
    "_pending_task_ids": _marked(COMPONENT, _PROTOCOL),
    "_reader_lock": _marked(COMPONENT, _PROTOCOL),
    "_writer_lock": _marked(COMPONENT, _PROTOCOL),
    # -- Component: methods --------------------------------------------------------------
    "initialize": _kept(COMPONENT),
    "emit": _kept(COMPONENT),
    "log": _kept(COMPONENT),
    "raise_exception": _marked(COMPONENT, "heronpy has no raise_exception; log the error "
                               "and raise"),
    "report_metric": _marked(COMPONENT, "heronpy reports metrics through context."
                             "register_metric(name, metric, seconds) instead of "
                             "report_metric"),
    "is_heartbeat": _marked(COMPONENT, "heronpy never hands a component heartbeats"),
    "run": _marked(COMPONENT, "heronpy starts components itself: there is no run() loop"),
    "read_message": _marked(COMPONENT, _PROTOCOL),
    "send_message": _marked(COMPONENT, _PROTOCOL),
    "read_handshake": _marked(COMPONENT, _PROTOCOL),
    "read_task_ids": _marked(COMPONENT, _PROTOCOL),
    "read_command": _marked(COMPONENT, _PROTOCOL),
    "_setup_component": _marked(COMPONENT, _PROTOCOL),
    "_run": _marked(COMPONENT, _PROTOCOL),
    "_exit": _marked(COMPONENT, _PROTOCOL),
    "_handle_run_exception": _marked(COMPONENT, "heronpy never calls "
                                     "_handle_run_exception: the task ends on an error"),
    # -- streamparse's Component ---------------------------------------------------------
    "outputs": _kept(COMPONENT),
    "spec": _kept(COMPONENT),
    "par": _kept(COMPONENT, "the class (HB007 passes it to spec(), which heronpy reads)"),
    "config": _kept(COMPONENT, "the class (HB007 passes it to spec(), which heronpy "
                    "reads)"),
    # -- Bolt ----------------------------------------------------------------------------
    "auto_ack": _marked(BOLT, _AUTO.format(name="auto_ack"), BATCHING),
    "auto_anchor": _marked(BOLT, _AUTO.format(name="auto_anchor"), BATCHING),
    "auto_fail": _marked(BOLT, _AUTO.format(name="auto_fail"), BATCHING),
    "process": _kept(BOLT),
    "process_tick": _kept(BOLT),
    "ack": _kept(BOLT),
    "fail": _kept(BOLT),
    "is_tick": _kept(BOLT),
    "read_tuple": _marked(BOLT, "heronpy has no protocol methods; tuples arrive in "
                          "process()"),
    "_current_tups": _marked(BOLT, _INTERNAL),
    "_source_tuple_types": _marked(BOLT, _INTERNAL),
    # -- BatchingBolt and TicklessBatchingBolt (heronbridge's extras) --------------------
    "ticks_between_batches": _kept(BATCHING_BOLT, EXTRAS),
    "group_key": _kept(BATCHING_BOLT, EXTRAS),
    "process_batch": _kept(BATCHING_BOLT, EXTRAS),
    "process_batches": _kept(BATCHING_BOLT, EXTRAS),
    "_batches": _marked(BATCHING_BOLT, _INTERNAL),
    "_tick_counter": _marked(BATCHING_BOLT, _INTERNAL),
    "_current_key": _marked(BATCHING_BOLT, _INTERNAL),
    "secs_between_batches": _kept(TICKLESS_BATCHING_BOLT, EXTRAS),
    "exc_info": _marked(TICKLESS_BATCHING_BOLT, "heronbridge's TicklessBatchingBolt runs "
                        "batches in the task's thread: there is no batcher error to read"),
    "_batch_lock": _marked(TICKLESS_BATCHING_BOLT, _INTERNAL),
    "_batcher": _marked(TICKLESS_BATCHING_BOLT, _INTERNAL),
    "_batch_entry": _marked(TICKLESS_BATCHING_BOLT, _INTERNAL),
    "_batch_entry_run": _marked(TICKLESS_BATCHING_BOLT, _INTERNAL),
    "_handle_worker_exception": _marked(TICKLESS_BATCHING_BOLT, _INTERNAL),
    # -- Spout and ReliableSpout ---------------------------------------------------------
    "next_tuple": _kept(SPOUT),
    "activate": _kept(SPOUT),
    "deactivate": _kept(SPOUT),
    "max_fails": _kept(RELIABLE_SPOUT, EXTRAS),
    "unacked_tuples": _kept(RELIABLE_SPOUT, EXTRAS),
    "failed_tuples": _kept(RELIABLE_SPOUT, EXTRAS),
}

SET_NAMES = tuple(n for n, a in ATTRIBUTES.items() if a.becomes == SET)


def value(name: str, kind: str | None) -> str:
    """The expression `initialize(self, config, context)` sets a SET attribute to."""
    if name == "storm_conf" and kind in HAVE[SPOUT]:
        return "storm_conf(context, spout=True)"  # Storm shows spouts their tick period
    return ATTRIBUTES[name].detail
