"""One Spark session for every analysis test: starting Spark costs about ten seconds."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from heronbridge.conformance.analysis import session

    made = session("local[2]")
    yield made
    made.stop()
