"""How a one-input Streamlet operator becomes a bolt of the topology: shared by the
repaired operators (streamlet.py) and the sink (sink.py)."""

from __future__ import annotations

from typing import Any


def build_bolt(streamlet: Any, builder: Any, stage_names: set, prefix: str, bolt: type,
                config: dict | None = None) -> bool:
    """heronpy's `_build_this` of a one-input operator: name it, add its bolt."""
    if not streamlet.get_name():
        streamlet.set_name(streamlet._default_stage_name_calculator(prefix, stage_names))
    if streamlet.get_name() in stage_names:
        msg = "Duplicate Names"  # heronpy's words
        raise RuntimeError(msg)
    stage_names.add(streamlet.get_name())
    builder.add_bolt(streamlet.get_name(), bolt, par=streamlet.get_num_partitions(),
                     inputs=streamlet._calculate_inputs(), config=config)
    return True
