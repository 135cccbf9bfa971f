"""Streamlet topologies through `heronbridge run`: the word count over tumbling windows,
each window's counts checked; and a reduce_by_key_and_window under a source as fast as
it goes (once: nothing emitted, the task's memory growing without end), which now
emits a window every two seconds while its task's memory stays flat."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from testkit import heronbridge

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "heronpy" / "streamlet_wordcount.py"
MB = 1 << 20


def run(tmp_path: Path, topology: Path, secs: float, *options: str) -> str:
    opts = [a for o in options for a in ("-o", o)]
    result = heronbridge("run", str(topology), "-t", str(secs), "--home",
                         str(tmp_path / "home"), "-o", "heronbridge.metrics.interval.secs=0.5",
                         *opts, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return result.stdout


def task_samples(tmp_path: Path, component: str) -> list[dict]:
    sinks = (tmp_path / "home" / "topologies").glob("*/current/container-*/metrics.jsonl")
    rows = [json.loads(line) for sink in sinks for line in sink.read_text().splitlines()]
    return sorted((r for r in rows if r["component"] == component), key=lambda r: r["ts_ms"])


@pytest.mark.compat("heronpy/Streamlet Builder and Runner", "heronpy/Streamlet.flat_map",
                    "heronpy/Streamlet.reduce_by_key_and_window")
def test_the_streamlet_word_count_counts_each_tumbling_window(tmp_path):
    spec = importlib.util.spec_from_file_location("streamlet_wordcount", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    sentences = example.SENTENCES
    out, bursts, burst = tmp_path / "out", 2, 40
    out.mkdir()
    # Bursts 4 s apart: a loaded machine delayed one into the next second's window, which
    # then ran on into the other burst's at 2.2 s.
    run(tmp_path, EXAMPLE, 6.5, f"wordcount.out={out}", f"wordcount.bursts={bursts}",
        f"wordcount.burst={burst}", "wordcount.gap=4")
    windows: dict[tuple[float, float], Counter] = defaultdict(Counter)
    for path in out.glob("windows-*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            assert row["word"] not in windows[(row["start"], row["end"])]  # one row per word
            windows[(row["start"], row["end"])][row["word"]] = row["count"]
    # A burst takes milliseconds and bursts are more than two windows apart: each burst
    # is one window, or (when a window ended during it) two windows back to back.
    runs: list[list[Counter]] = []
    last_end = None
    for (start, end), counts in sorted(windows.items()):
        assert end - start == pytest.approx(1, abs=0.2)  # one second, give or take a tick
        if start != last_end:
            runs.append([])
        runs[-1].append(counts)
        last_end = end
    expected = [Counter(w for i in range(b * burst, (b + 1) * burst)
                        for w in sentences[i % len(sentences)].split()) for b in range(bursts)]
    assert len(runs) == bursts, [sum(c.values()) for c in windows.values()]
    for burst_counts, windows_of_burst in zip(expected, runs, strict=True):
        assert len(windows_of_burst) <= 2
        for counts in windows_of_burst:  # each window: part (or all) of its burst, no other
            assert counts and not counts - burst_counts
        assert sum(windows_of_burst, Counter()) == burst_counts


FAST = textwrap.dedent("""
    import datetime, json, random, sys

    from heronpy.streamlet.builder import Builder
    from heronpy.streamlet.config import Config
    from heronpy.streamlet.runner import Runner
    from heronpy.streamlet.windowconfig import WindowConfig

    WORDS = [f"word{i}" for i in range(100)]

    def write(element):
        keyed, count = element
        with open(@OUT@, "a") as f:
            f.write(json.dumps([keyed._window._end_time, keyed._key, count]) + "\\n")

    if __name__ == "__main__":
        b = Builder()
        (b.new_source(lambda: random.choice(WORDS)).set_name("words")
         .map(lambda w: (w, 1)).set_name("ones")
         .reduce_by_key_and_window(
             WindowConfig.create_tumbling_window(datetime.timedelta(seconds=2)),
             lambda a, c: a + c).set_name("counts")
         .consume(write))
        Runner().run(sys.argv[1], Config(), b)
""")


def test_a_window_over_a_fast_source_emits_and_its_memory_stays_flat(tmp_path):
    out = tmp_path / "windows.jsonl"
    script = tmp_path / "fast_windows.py"
    script.write_text(FAST.replace("@OUT@", repr(str(out))))
    run(tmp_path, script, 4.5)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    ends = sorted({end for end, _, _ in rows})
    assert len(ends) >= 2  # a window every two seconds (the first ends 2 s in)
    samples = task_samples(tmp_path, "counts")
    received = samples[-1]["counters"]["execute-count"]
    assert 0 < sum(count for _, _, count in rows) <= received
    assert all(len([r for r in rows if r[0] == end]) <= 100 for end in ends)  # one per key
    rss = [s["gauges"]["rss-bytes"] for s in samples]
    # Settled after its first window: from then on the task holds one sum per word,
    # however many tuples arrive (it grew by ~24 MB a second when windows never ended).
    after_first = [s["gauges"]["rss-bytes"] for s in samples
                   if s["ts_ms"] >= samples[0]["ts_ms"] + 2500]
    print(f"counts task: {received:,.0f} tuples received, {len(ends)} windows, "
          f"RSS {min(rss) / MB:.1f}-{max(rss) / MB:.1f} MB")
    assert max(after_first) - min(after_first) < 4 * MB
    assert max(rss) < 64 * MB
