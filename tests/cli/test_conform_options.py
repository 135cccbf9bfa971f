"""`conform -o KEY=VALUE` sets a topology config key on both systems, over the project's
and the scenario's (a project's log folder, say, that this machine must not create)."""

from __future__ import annotations

import types

import pytest

from heronbridge import conform_verbs
from heronbridge.cli import build_parser


class Ran(Exception):
    pass


def test_conform_takes_options_over_the_scenario(tmp_path, monkeypatch):
    seen = {}

    def conform(scenario, run_dir, **kwargs):
        seen["scenario"] = scenario
        raise Ran

    monkeypatch.setattr(conform_verbs.extras, "load",
                        lambda *args: types.SimpleNamespace(conform=conform))
    args = build_parser().parse_args([
        "conform", "--project", str(tmp_path), "--home", str(tmp_path / "home"),
        "-o", "pystorm.log.path=/tmp/elsewhere", "-o", "topology.max.spout.pending=50"])
    with pytest.raises(Ran):
        args.func(args)
    assert seen["scenario"].config == {"pystorm.log.path": "/tmp/elsewhere",
                                       "topology.max.spout.pending": 50}
    assert seen["scenario"].storm_options()["pystorm.log.path"] == "/tmp/elsewhere"
