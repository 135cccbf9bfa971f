"""The per-tuple path of the word count, in one process, stage by stage.

    python benchmarks/hot_path.py [--sentences N]

Drives the runtime's real collectors and receive loop without sockets or a stream
manager, so each stage's cost per tuple is measured without the noise of scheduling:
spout emit, split (decode, execute, anchored emits, acks), count (decode, execute,
acks), and the stream manager's XOR tracking. Use it to see what a change to the hot
path buys before running the full benchmark.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "runtime"))

from wordcount import CountBolt, SentenceSpout, SplitBolt  # noqa: E402

from heronbridge.runtime import Grouping, TopologyBuilder  # noqa: E402
from heronbridge.runtime.api.context import TopologyContext  # noqa: E402
from heronbridge.runtime.config import EXECUTE_BATCH_MS, TopologyConfig  # noqa: E402
from heronbridge.runtime.instance.bolt_step import BoltStep  # noqa: E402
from heronbridge.runtime.instance.emitter import BoltEmitter, SpoutEmitter, stream_table  # noqa: E402
from heronbridge.runtime.instance.task import Attached, Task  # noqa: E402
from heronbridge.runtime.plan.tasks import TaskLayout  # noqa: E402
from heronbridge.runtime.stream_manager.acking import XorTracker  # noqa: E402
from heronbridge.runtime.wire import frames  # noqa: E402
from heronbridge.runtime.wire.serde import make_serializer  # noqa: E402


def plan(acking: bool = True, count_tasks: int = 1):
    mode = "ATLEAST_ONCE" if acking else "ATMOST_ONCE"
    builder = TopologyBuilder("hot-path", {"topology.reliability.mode": mode})
    spout = builder.spout("sentences", SentenceSpout)
    split = builder.bolt("split", SplitBolt, inputs=[spout])
    builder.bolt("count", CountBolt, inputs={split: Grouping.by_fields("word")}, par=count_tasks)
    return builder.build()


def hosted(plan, task, user, emitter) -> Task:
    """A task hosting `user` on `emitter`, without process or socket."""
    runner = Task("hot-path-id", task, 0, "", "", secret=b"")
    layout = TaskLayout.of(plan)
    component = layout.task_component[task]
    # One flush per fed batch, as measured here: no flushes inside a long batch.
    conf = {**plan.component_config(component), EXECUTE_BATCH_MS: 1e9}
    runner.topology, runner.component = plan.name, component
    runner.attached = Attached(plan, layout, plan.components[component], conf,
                               TopologyConfig.read(conf, plan.name),
                               TopologyContext.build(plan, "hot-path-id", task),
                               make_serializer("msgpack"), stream_table(plan), frozenset(), task)
    runner.user, runner.emitter = user, emitter
    user.collector = emitter
    return runner


def receiver(plan, task, user, emitter) -> BoltStep:
    """A bolt task's step wired to a component: feed() runs frames through it."""
    return BoltStep(hosted(plan, task, user, emitter))


def feed(runner, out_frames, kinds=(frames.DATA,)):
    for frame in out_frames:
        for kind, _dest, start, end in frames.split_frames(frame)[0]:
            if kind in kinds:
                runner.execute_frame(frame, start, end)


def run_once(sentences: int, batch: int, acking: bool,
             count_tasks: int) -> tuple[int, dict[str, float]]:
    p = plan(acking, count_tasks)
    layout = TaskLayout.of(p)
    ser = make_serializer("msgpack")
    tasks = layout.component_tasks
    spout = SentenceSpout()
    spout_em = SpoutEmitter(p, tasks["sentences"][0], ser, acking, frozenset(), seed=1)
    spout.collector = spout_em
    spout.open({}, None, spout_em)
    split_em = BoltEmitter(p, tasks["split"][0], ser, acking, frozenset(), seed=2)
    split = SplitBolt()
    split_rx = receiver(p, tasks["split"][0], split, split_em)
    counts = []
    for task in tasks["count"]:
        bolt = CountBolt()
        bolt.prepare({}, None, None)
        em = BoltEmitter(p, task, ser, acking, frozenset(), seed=task)
        counts.append((task, receiver(p, task, bolt, em), em))
    tracker = XorTracker()
    stage = dict.fromkeys(("spout", "split", "count", "acking"), 0.0)
    words = 0
    clock = time.perf_counter
    for _ in range(sentences // batch):
        t = clock()
        spout_em.now = t
        for _ in range(batch):
            spout.next_tuple()
        sframes = spout_em.flush()
        stage["spout"] += clock() - t
        t = clock()
        feed(split_rx, sframes)
        wframes = split_em.flush()
        stage["split"] += clock() - t
        t = clock()
        acks = []
        for task, rx, em in counts:
            mine = [f for f in wframes if f[0] and frames.HEADER.unpack_from(f)[2] == task]
            feed(rx, mine)
            acks += em.flush()
        stage["count"] += clock() - t
        t = clock()
        done: list[int] = []
        for frame in sframes + wframes + acks:
            kind = frame[4]
            if kind in (frames.INIT, frames.ACK):
                body = frames.ints_from(memoryview(frame)[frames.HEADER_SIZE:]).tolist()
                (tracker.init if kind == frames.INIT else tracker.ack)(body, done)
        stage["acking"] += clock() - t
    words = sum(rx.counts["execute-count"] for _, rx, _ in counts)
    if len(tracker):
        msg = f"error: {len(tracker)} trees did not complete"
        raise SystemExit(msg)
    return words, stage


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500, help="sentences per flush")
    parser.add_argument("--rounds", type=int, default=5,
                        help="repeat and keep each stage's fastest round (noise only adds)")
    parser.add_argument("--at-most-once", action="store_true", help="no acking")
    parser.add_argument("--count-tasks", type=int, default=1, help="count bolt parallelism")
    args = parser.parse_args()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        words, stage = run_once(args.sentences, args.batch, not args.at_most_once,
                                args.count_tasks)
        for name, seconds in stage.items():
            ns = seconds / words * 1e9
            best[name] = min(best.get(name, ns), ns)
    total = sum(best.values())
    print(f"{words:,} words per round, best of {args.rounds}; ns per word by stage:")
    for name, ns in best.items():
        print(f"  {name:7s} {ns:7.1f}")
    print(f"  total   {total:7.1f}  ({1e9 / total:,.0f} words/s on one core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
