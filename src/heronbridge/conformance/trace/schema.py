"""What a trace holds: the files, the records and the options that steer the hook.

Layout: `<run dir>/<system>/traces/<component>-<task>-<pid>.trace`, one file per task
process (a restarted task starts a new file), with `<system>` `storm` or `runtime`, in
the binary format `tracefile` describes. Every record has these keys:

    t          wall-clock seconds (time.time()) when the hook saw the message
    seq        position in this file, from 0
    ev         the event, below
    component  the traced task's component id
    task       the traced task's id

and, per event:

    start        pid (the component's process), tasks ({component id: [task ids]},
                 from the handshake's task->component, system components included)
    recv         a bolt's input tuple: id (the multilang tuple id, a string), src
                 (source component), stream, src_task, values (canonical JSON text).
                 Ticks come as src "__system", stream "__tick"; heartbeats are left out.
    emit         stream, values (canonical JSON text), anchors (list of tuple ids; [] for
                 spouts), direct (task id or null), msg_id (a spout's message id as
                 canonical JSON text, or null), targets (task ids when the component
                 asked for them, else null)
    ack / fail   a bolt acked or failed one of its input tuples: id, injected (true when
                 the hook did it, as a fault)
    spout_ack / spout_fail
                 a spout was told its tuple tree completed or failed: msg_id
    activate / deactivate
                 a spout was activated or deactivated
    error        the component reported an error: msg
    drop         an injected fault swallowed an input tuple: id
    exit         an injected fault is about to end the component's process: reason
    stop         the run's bound stopped a spout task: from now on the hook answers
                 Storm's side's `next` itself: emits (from next_tuple, so far), reason
                 ("tuples" or "seconds")
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

STORM = "storm"
RUNTIME = "runtime"
SYSTEMS = (STORM, RUNTIME)

TRACES = "traces"  # the folder under <run dir>/<system>

# Topology options the hook reads from the handshake's conf.
TRACE_DIR = "heronbridge.conformance.trace.dir"  # where this system's trace files go
# A list of faults, each {"component": id, "task_index": i or null (every task),
# "kind": "fail" | "drop" | "exit", "every": n (fail, drop: the n-th, 2n-th ... input
# tuple) or "after": n (exit: once n input tuples have been handed to the component)}.
FAULTS = "heronbridge.conformance.faults"
# How long each spout task is asked for tuples: {"tuples": n or null (emits from
# next_tuple), "seconds": s or null (from its first next_tuple), "counts": {component:
# [emits per task index]} or null (an earlier run's own stops, which win)}.
BOUND = "heronbridge.conformance.bound"
# Python's random (and numpy's, where imported) is seeded per task with a seed made
# from this number, the component and the task's index: the same on both systems.
# null: not seeded.
SEED = "heronbridge.conformance.seed"

# Events.
START = "start"
RECV = "recv"
EMIT = "emit"
ACK = "ack"
FAIL = "fail"
SPOUT_ACK = "spout_ack"
SPOUT_FAIL = "spout_fail"
ACTIVATE = "activate"
DEACTIVATE = "deactivate"
ERROR = "error"
DROP = "drop"
EXIT = "exit"
STOP = "stop"

SYSTEM_COMPONENT = "__system"
TICK_STREAM = "__tick"
HEARTBEAT_STREAM = "__heartbeat"


SORTED_JSON = msgspec.json.Encoder(order="sorted").encode


def canonical_bytes(value: Any) -> bytes:
    """The one text for a value on both systems, as UTF-8: after the multilang JSON
    round trip, equal values give equal text (Storm's maps lose key order, so keys are
    sorted). A value JSON cannot hold as it is (keys that are not strings, objects only
    an in-process component could emit) is taken as JSON would carry it."""
    try:
        return SORTED_JSON(value)
    except (TypeError, ValueError, OverflowError):
        return SORTED_JSON(json.loads(json.dumps(value, default=repr)))


def canonical(value: Any) -> str:
    return canonical_bytes(value).decode()
