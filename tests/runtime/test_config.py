"""The runtime's typed reading of topology config."""

from __future__ import annotations

import pytest

from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.errors import ConfigError


def test_defaults_and_string_values_as_from_a_command_line():
    conf = TopologyConfig.read({"topology.max.spout.pending": "500",
                                "topology.reliability.mode": "ATLEAST_ONCE",
                                "topology.enable.message.timeouts": "false"}, "t")
    assert conf.max_spout_pending == 500
    assert conf.acking
    assert not conf.message_timeouts
    assert conf.serializer == "msgpack"


def test_effectively_once_reads_herons_interval_key_too():
    conf = TopologyConfig.read({"topology.reliability.mode": "EFFECTIVELY_ONCE",
                                "topology.stateful.checkpoint.interval.seconds": "5"}, "t")
    assert conf.stateful and not conf.acking
    assert conf.checkpoint_interval_secs == 5


@pytest.mark.parametrize(("conf", "expected"), [
    ({"topology.reliability.mode": "SOMETIMES"},
     "topology 't', component 'c': config 'topology.reliability.mode' expects one of "
     "('ATMOST_ONCE', 'ATLEAST_ONCE', 'EFFECTIVELY_ONCE'), received 'SOMETIMES'"),
    ({"topology.stateful.checkpoint.interval.seconds": 0},
     "config 'topology.stateful.checkpoint.interval.secs' expects seconds > 0, received 0"),
    ({"topology.max.spout.pending": 0},
     "config 'topology.max.spout.pending' expects an integer >= 1 or null, received 0"),
    ({"topology.message.timeout.secs": "soon"},
     "config 'topology.message.timeout.secs' expects seconds > 0, received 'soon'"),
    ({"topology.debug": "maybe"}, "config 'topology.debug' expects true or false"),
    ({"heronbridge.serializer": "xml"}, "expects one of ('msgpack', 'json', 'pickle')"),
    ({"heronbridge.backpressure.low.watermark.bytes": 1 << 30},
     "expects a value below 'heronbridge.backpressure.high.watermark.bytes'"),
])
def test_bad_values_name_key_expectation_and_value(conf, expected):
    with pytest.raises(ConfigError) as err:
        TopologyConfig.read(conf, "t", "c")
    assert expected in str(err.value)


def test_every_field_is_read_from_one_declared_key():
    from dataclasses import fields

    from heronbridge.runtime.config import KEYS

    declared = [k.field for k in KEYS.values() if k.field]
    assert len(declared) == len(set(declared))
    assert set(declared) | {"host", "tls"} == {f.name for f in fields(TopologyConfig)}


def test_the_docs_configuration_reference_has_every_key():
    from pathlib import Path

    from heronbridge.runtime.config import KEYS, reference

    page = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "config.md").read_text()
    assert all(f"| `{name}` |" in page for name in KEYS)
    assert "| `heronbridge.emit.batch.time.ms` | number | 5 | 0.001 |" in reference()
