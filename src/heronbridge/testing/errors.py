"""The test harness's root exception."""

from heronbridge.errors import HeronbridgeError


class TestingError(HeronbridgeError):
    """A test harness error: a topology, a mocked source or a run it cannot use."""

    __test__ = False  # not a test class, whatever pytest's collection thinks of the name
