"""What a trace holds: the files, the records and the options that steer the hook.

Layout: `<run dir>/<system>/traces/<component>-<task>-<pid>.jsonl`, one file per task
process (a restarted task starts a new file), with `<system>` `storm` or `runtime`.

Every record is one JSON object on one line with these keys:

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
"""

from __future__ import annotations

import json
from typing import Any

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

SYSTEM_COMPONENT = "__system"
TICK_STREAM = "__tick"
HEARTBEAT_STREAM = "__heartbeat"


def canonical(value: Any) -> str:
    """The one text for a value on both systems: after the multilang JSON round trip,
    equal values give equal text (Storm's maps lose key order, so keys are sorted)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def trace_file_name(component: str, task: int, pid: int) -> str:
    return f"{component}-{task}-{pid}.jsonl"
