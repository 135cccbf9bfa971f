"""The stream manager's router, without sockets: frames in, frames out."""

from __future__ import annotations

import time

import pytest

from heronbridge.runtime.api.tuple import MULTI
from heronbridge.runtime.config import TopologyConfig
from heronbridge.runtime.proto import control_pb2
from heronbridge.runtime.stream_manager.router import SHIFT, Router
from heronbridge.runtime.stream_manager.undelivered import Undelivered
from heronbridge.runtime.wire import frames
from heronbridge.runtime.wire.serde import make_serializer

SER = make_serializer("msgpack")
HOLD, TIMEOUT = 30.0, 5.0  # seconds a frame is held at most; the message timeout
SPOUT, BOLT, REMOTE_BOLT, REMOTE_SPOUT = 1, 2, 3, 4


class End:
    """A task's or a peer's link, as the router sees it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.epoch = 0
        self.controls: list = []

    def peer_name(self) -> str:
        return self.name


def root(task: int, seq: int) -> int:
    return task << SHIFT | seq


def router(gated: bool = False, acking: bool = True,
           on_held=lambda held: None) -> tuple[Router, dict[str, End]]:
    ends = {name: End(name) for name in ("spout", "bolt", "peer")}
    r = Router("stmgr-1", acking=acking, gated=gated, xor_buckets=3, decode=SER.decode,
               on_control=lambda source, message: source.controls.append(message),
               undelivered=Undelivered(HOLD, TIMEOUT, 1 << 20), on_held=on_held)
    r.route = {SPOUT: ends["spout"], BOLT: ends["bolt"], REMOTE_BOLT: ends["peer"],
               REMOTE_SPOUT: ends["peer"]}
    r.place({SPOUT}, all_spouts_local=False)
    return r, ends


def send(r: Router, source: End, *out: bytes) -> dict:
    data = b"".join(out)
    found, used = frames.split_frames(data)
    assert used == len(data)
    return {end.name: [bytes(c) for c in chunks]
            for end, chunks in r.receive(source, data, found).items()}


def data(dest: int, records: list) -> bytes:
    return frames.data_frame(dest, SPOUT, 0, SER.encode(records))


def roots_of(out: list[bytes], kind: int) -> list[int]:
    return [r for f in out if f[4] == kind for r in frames.ints_from(f[frames.HEADER_SIZE:])]


def test_data_goes_untouched_to_the_endpoint_of_its_task_in_order():
    r, ends = router()
    a, b, c = data(BOLT, [[["a"]]]), data(REMOTE_BOLT, [[["b"]]]), data(BOLT, [[["c"]]])
    out = send(r, ends["spout"], a, b, c)
    assert out == {"bolt": [a, c], "peer": [b]}
    assert (r.routed, r.dropped) == (3, 0)


def test_a_tree_completes_when_its_acks_cancel_its_edges_whatever_their_order():
    r, ends = router()
    tree = root(SPOUT, 7)
    assert send(r, ends["spout"], frames.int_frame(frames.INIT, 0, [tree, 0b011])) == {}
    assert send(r, ends["bolt"], frames.int_frame(frames.ACK, 0, [tree, 0b010])) == {}
    out = send(r, ends["bolt"], frames.int_frame(frames.ACK, 0, [tree, 0b001]))
    assert roots_of(out["spout"], frames.ACKED) == [tree]
    assert (r.acked, len(r.tracker)) == (1, 0)


def test_a_tree_with_no_subscriber_completes_at_its_init():
    r, ends = router()
    out = send(r, ends["spout"], frames.int_frame(frames.INIT, 0, [root(SPOUT, 1), 0]))
    assert roots_of(out["spout"], frames.ACKED) == [root(SPOUT, 1)]


def test_acks_and_fails_of_a_spout_behind_a_peer_go_to_that_peer():
    r, ends = router()
    theirs = root(REMOTE_SPOUT, 3)
    out = send(r, ends["bolt"], frames.int_frame(frames.ACK, 0, [theirs, 5]),
               frames.int_frame(frames.FAIL, 0, [theirs]))
    assert [f[4] for f in out["peer"]] == [frames.ACK, frames.FAIL]
    assert list(frames.ints_from(out["peer"][0][frames.HEADER_SIZE:])) == [theirs, 5]
    assert r.acked == r.failed == 0


def test_a_fail_reaches_the_spout_once():
    r, ends = router()
    tree = root(SPOUT, 9)
    send(r, ends["spout"], frames.int_frame(frames.INIT, 0, [tree, 1]))
    out = send(r, ends["bolt"], frames.int_frame(frames.FAIL, 0, [tree]),
               frames.int_frame(frames.FAIL, 0, [tree]))
    assert roots_of(out["spout"], frames.FAILED) == [tree]


def test_a_frame_for_a_task_that_is_down_is_held_until_it_can_be_reached():
    held = []
    r, ends = router(on_held=held.append)
    r.follow_plan(frozenset({SPOUT, BOLT, 99}))
    tree = root(SPOUT, 1)
    send(r, ends["spout"], frames.int_frame(frames.INIT, 0, [tree, 1]))
    first, second = data(99, [[["x"], tree, 1]]), data(99, [[["y"]]])
    assert send(r, ends["spout"], first, second) == {}
    assert held == [True]  # the caller pauses the spouts
    assert r.release(lambda end: True) == {}  # 99 has no endpoint yet
    back = End("back")
    r.route[99] = back
    assert r.release(lambda end: end is not back) == {}  # not reachable yet
    out = r.release(lambda end: True)
    assert [bytes(f) for f in out[back]] == [first, second]  # in the order they came
    assert held == [True, False]
    assert r.settle(time.monotonic() + 3600) == {}  # nothing fails
    assert r.dropped == 0


def test_the_trees_of_a_frame_for_a_task_no_plan_has_fail_at_their_timeout_not_before():
    r, ends = router()
    r.follow_plan(frozenset({SPOUT, BOLT}))
    one, two = root(SPOUT, 1), root(SPOUT, 2)
    send(r, ends["spout"], frames.int_frame(frames.INIT, 0, [one, 1, two, 2]))
    gone = 99
    out = send(r, ends["spout"], data(gone, [[["x"], one, 1], [["y"], MULTI, [0, two, 2]],
                                             [["z"]]]))
    assert out == {} and r.dropped == 1
    assert r.settle(time.monotonic()) == {}
    out = r.settle(time.monotonic() + TIMEOUT)
    assert sorted(roots_of([bytes(f) for f in out[ends["spout"]]], frames.FAILED)) == [one, two]


def test_frames_held_too_long_are_given_up_and_their_trees_fail_a_timeout_later():
    held = []
    r, ends = router(on_held=held.append)
    tree = root(SPOUT, 3)
    send(r, ends["spout"], frames.int_frame(frames.INIT, 0, [tree, 1]))
    send(r, ends["spout"], data(99, [[["x"], tree, 1]]))
    now = time.monotonic()
    assert r.settle(now + HOLD - 1) == {} and held == [True]
    out = r.settle(now + HOLD + TIMEOUT + 1)
    assert held == [True, False] and r.dropped == 1
    assert roots_of([bytes(f) for f in out[ends["spout"]]], frames.FAILED) == [tree]


def test_a_plan_without_the_task_gives_its_held_frames_up():
    r, ends = router()
    send(r, ends["spout"], data(99, [[["x"], root(SPOUT, 1), 1]]))
    r.follow_plan(frozenset({SPOUT, BOLT}))
    assert not r.holding and r.dropped == 1


def test_without_acking_a_dropped_frame_fails_nothing_and_nothing_is_held():
    r, ends = router(acking=False)
    assert send(r, ends["spout"], data(99, [[["x"], root(SPOUT, 1), 1]])) == {}
    assert r.dropped == 1 and not r.holding
    assert r.settle(time.monotonic() + 3600) == {}


def test_frames_that_could_not_be_written_are_held_like_the_others():
    r, _ = router()
    frame = data(BOLT, [[["x"], root(SPOUT, 4), 1]])
    r.undeliverable([memoryview(frame)])
    assert r.holding
    assert [bytes(f) for f in r.release(lambda end: True)[r.route[BOLT]]] == [frame]


def test_trees_expire_after_their_buckets_rotate_out():
    r, ends = router()
    tree = root(SPOUT, 5)
    send(r, ends["spout"], frames.int_frame(frames.INIT, 0, [tree, 1]))
    assert r.expire() == {} and r.expire() == {}
    out = r.expire()
    assert [bytes(f) for f in out[ends["spout"]]] == [frames.int_frame(frames.EXPIRED, SPOUT,
                                                                       [tree])]
    assert r.expired == 1


def test_after_a_rollback_only_frames_sent_after_it_pass():
    r, ends = router(gated=True)
    r.epoch = 2
    frame = data(BOLT, [[["old"]]])
    assert send(r, ends["spout"], frame) == {}
    assert r.discarded == 1
    # The source says it restored (a control frame); what follows it in the same read passes.
    restored = frames.control_frame(control_pb2.InstanceRestored(task_id=SPOUT, txid=2))

    def on_control(source, message):
        source.epoch = message.txid

    r.on_control = on_control
    assert send(r, ends["spout"], frame, restored, frame) == {"bolt": [frame]}
    assert r.discarded == 2


def test_a_malformed_frame_costs_only_itself():
    r, ends = router()
    bad_ack = frames.HEADER.pack(frames.HEADER_SIZE - 4 + 3, frames.ACK, 0) + b"abc"
    good = data(BOLT, [[["a"]]])
    assert send(r, ends["spout"], bad_ack, good) == {"bolt": [good]}
    assert r.malformed == 1


def test_control_frames_reach_the_handler_with_their_source():
    r, ends = router()
    hello = control_pb2.StreamManagerHello(topology_id="t", stmgr_id="stmgr-2")
    send(r, ends["peer"], frames.control_frame(hello))
    assert ends["peer"].controls == [hello]


@pytest.mark.compat("config/heronbridge.acking.buckets")
@pytest.mark.parametrize("buckets", [2, 5])
def test_a_tree_outlives_as_many_rotations_as_the_acking_buckets_key_says(buckets):
    conf = TopologyConfig.read({"topology.reliability.mode": "ATLEAST_ONCE",
                                "heronbridge.acking.buckets": buckets}, "t")
    r = Router.of("stmgr-1", conf, "t", lambda source, message: None)
    spout = End("spout")
    r.route = {SPOUT: spout}
    r.place({SPOUT}, all_spouts_local=True)
    tree = root(SPOUT, 5)
    send(r, spout, frames.int_frame(frames.INIT, 0, [tree, 1]))
    assert all(r.expire() == {} for _ in range(buckets - 1))
    assert [bytes(f) for f in r.expire()[spout]] == [frames.int_frame(frames.EXPIRED, SPOUT,
                                                                      [tree])]
