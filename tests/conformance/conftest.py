"""What every conformance test shares: one Spark session (starting Spark costs about ten
seconds); the Storm install is tests/conftest.py's, shared with the Nimbus tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from heronbridge.conformance.analysis import session

    made = session("local[2]")
    yield made
    made.stop()
