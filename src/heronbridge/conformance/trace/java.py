"""Java components under the tracing: the JVM task host's jar holds a wrapper spout and
bolt (`heronbridge.jvm.trace`) that make the component as it is and write the same
records as the tracing hook does for a multilang task. Both systems run a Java
component so: Storm through its Flux topology, the runtime through the plan's Java spec.
"""

from __future__ import annotations

import json
from typing import Any

from . import schema

TRACED_SPOUT = "heronbridge.jvm.trace.TracedSpout"
TRACED_BOLT = "heronbridge.jvm.trace.TracedBolt"


def options(hook_conf: dict[str, Any]) -> str:
    """The wrapper's options (trace folder, faults, bound) as its JSON argument."""
    keys = (schema.TRACE_DIR, schema.FAULTS, schema.BOUND)
    return json.dumps({k: hook_conf[k] for k in keys if hook_conf.get(k) is not None})


def traced(spec: dict[str, Any], is_spout: bool, hook_conf: dict[str, Any]) -> dict[str, Any]:
    """The wrapper's Java object spec (as the host reads one) around `spec`."""
    return {"class": TRACED_SPOUT if is_spout else TRACED_BOLT,
            "args": [{"string": json.dumps(spec)}, {"string": options(hook_conf)}]}
