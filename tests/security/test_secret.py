"""The per-topology secret: made at submit, new at every submit, kept where only its
owner can read it."""

from __future__ import annotations

import stat

from heronbridge.runtime import TopologyBuilder
from heronbridge.runtime.scheduler import submit_plan
from heronbridge.runtime.statemgr import SECRETS


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_submit_makes_a_new_secret_readable_by_its_owner_only(home, state):
    b = TopologyBuilder("secretive")
    b.spout("s", "rt_components:KeySpout")
    submit_plan(state, home, b.build())
    first = state.get_secret("secretive")
    submit_plan(state, home, b.build())
    second = state.get_secret("secretive")
    assert len(first) == len(second) == 32 and first != second
    root = home.root / "state"
    assert mode(root) == mode(root / SECRETS) == 0o700
    assert mode(root / SECRETS / "secretive") == 0o600
    assert all(mode(p) == 0o600 for p in root.glob("*/secretive"))
    state.clear("secretive")
    assert state.get_secret("secretive") is None
