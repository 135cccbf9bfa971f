"""A task's registrations at its stream manager: a new life replaces the last one's link,
and is a loss when that link was still open (its end went unseen)."""

from __future__ import annotations

from types import SimpleNamespace

from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.stream_manager.registry import Registry


class Transport:
    def __init__(self) -> None:
        self.closed = False
        self.reading = True

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        self.reading = False



class Link:
    """An InstanceLink's face to the registry (a real one needs a running event loop)."""

    task = component = None
    pid = 0
    is_spout = False

    def __init__(self) -> None:
        self.transport = Transport()


def link() -> Link:
    return Link()


def registry() -> tuple[Registry, list]:
    welcomed: list = []
    router = SimpleNamespace(forget_spout=lambda task: None)
    r = Registry("stmgr-0", "t-1", router, welcomed.append, lambda: None, lambda: True)
    r.local_tasks, r.local_spouts, r.has_pplan = {3, 4}, {3}, True
    return r, welcomed


def request(task: int) -> control_pb2.RegisterInstanceRequest:
    return control_pb2.RegisterInstanceRequest(topology_id="t-1", task_id=task, pid=100 + task)


def test_a_registration_over_a_link_still_open_is_a_new_life_and_a_loss():
    r, welcomed = registry()
    first = link()
    assert r.register(first, request(3)) is False  # a first life
    assert not first.transport.reading  # a spout, while spouts are paused: not read
    # The task was killed; paused, its link's end went unseen. Its next life registers.
    second = link()
    assert r.register(second, request(3)) is True
    assert first.transport.closed and r.instances[3] is second and welcomed == [first, second]
    # The old link's close, when it comes, is not a second loss.
    assert r.gone(first) is False and r.instances[3] is second


def test_a_registration_after_the_link_closed_is_no_second_loss():
    r, _ = registry()
    first = link()
    r.register(first, request(4))
    assert r.gone(first) is True  # the disconnect was the loss
    assert r.register(link(), request(4)) is False
