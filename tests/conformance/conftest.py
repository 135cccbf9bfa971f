"""What every conformance test shares: one Spark session (starting Spark costs about ten
seconds) and one Storm install (resolved into a home of its own; Maven's local
repository makes that quick after the first time)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from heronbridge.conformance.analysis import session

    made = session("local[2]")
    yield made
    made.stop()


@pytest.fixture(scope="session")
def storm_home(tmp_path_factory):
    return tmp_path_factory.mktemp("hb-home")


@pytest.fixture(scope="session")
def storm_install(storm_home):
    from heronbridge.conformance.storm import fetch

    return fetch(storm_home)
