"""heronpy's config values, as its topology protobuf stores them and as components see them.

heronpy stores a string, number or bool as a string ("true", "30") and anything else
pickled (PYTHON_SERIALIZED_VALUE). Heron's instance gives a component the topology
config merged with the component's, strings auto-typed back ("true" -> True, "30" -> 30)
and pickled values unpickled. The plan keeps the typed values, which the runtime reads
as well; a pickled value travels as {PICKLED: base64} and is unpickled in the task.
"""

from __future__ import annotations

import base64
import logging
import pickle
from typing import Any

from . import keys

log = logging.getLogger("heronbridge.shims.heronpy")

STRING_VALUE = 1
PYTHON_SERIALIZED_VALUE = 3


def auto_type(value: str) -> Any:
    """Heron's reading of a string config value: a number, a bool, or the string."""
    try:
        float(value)
    except ValueError:
        lowered = value.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        return value
    try:
        return int(value)
    except ValueError:
        return float(value)


def read_config(config: Any, where: str) -> dict[str, Any]:
    """A heronpy Config protobuf's key-values as plan config values."""
    out: dict[str, Any] = {}
    for kv in config.kvs:
        if kv.HasField("value"):
            out[kv.key] = auto_type(kv.value)
        elif kv.HasField("serialized_value") and kv.type == PYTHON_SERIALIZED_VALUE:
            out[kv.key] = {keys.PICKLED: base64.b64encode(kv.serialized_value).decode()}
        else:  # as Heron's instance does: say so and go on without it
            log.warning("%s: config %r has a value of type %s, which a Python topology "
                        "cannot read; it is left out", where, kv.key, kv.type)
    return out


def component_view(config: dict[str, Any]) -> dict[str, Any]:
    """What a component's `initialize(config=...)` gets: its merged config without the
    runtime's own keys, pickled values unpickled."""
    out = {}
    for key, value in config.items():
        if key.startswith(keys.PREFIX):
            continue
        if isinstance(value, dict) and len(value) == 1 and keys.PICKLED in value:
            out[key] = pickle.loads(base64.b64decode(value[keys.PICKLED]))  # noqa: S301
        else:
            out[key] = value
    return out
