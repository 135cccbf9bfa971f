"""The Nimbus tests' fixture: `heronbridge nimbus` started as a user starts it, on a free
loopback port with a home of its own, stopped with whatever it left running."""

from __future__ import annotations

import pytest
from nimbuskit import running_nimbus


@pytest.fixture
def nimbus(tmp_path):
    """`heronbridge nimbus` on a free loopback port, with a home of its own."""
    with running_nimbus(tmp_path / "home", tmp_path / "nimbus.log") as endpoint:
        yield endpoint
