"""Every example streamparse project runs unchanged on the runtime, in-process and with
--multilang, and its outputs are what its input implies."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from testkit import read_jsonl, wait_until

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"
MODES = pytest.mark.parametrize("multilang", [False, True], ids=["in-process", "multilang"])
WORD = re.compile(r"[a-z]+")


def words(path: Path) -> list[str]:
    return [w for line in path.read_text().splitlines() for w in WORD.findall(line.lower())]


def rows(out: Path, component: str) -> list[dict]:
    return [r for name, rs in read_jsonl(out, f"{component}-*.jsonl").items() for r in rs]


def last_by(out: Path, component: str, key: str, value: str) -> dict:
    """The last value written per key (counts only grow, so the max is the last)."""
    final: dict = {}
    for r in rows(out, component):
        final[r[key]] = max(final.get(r[key], 0), r[value])
    return final


def run_until(run_project, name: str, out: Path, multilang: bool, done, what: str,
              options: dict | None = None, timeout: float = 90) -> None:
    with run_project(EXAMPLES / name, options={"example.output.dir": str(out),
                                               **(options or {})},
                     multilang=multilang) as running:
        wait_until(done, timeout, what, interval=0.2, on_timeout=running.logs)


@MODES
def test_wordcount_counts_every_word_of_the_input(run_project, tmp_path, multilang):
    expected = Counter(words(EXAMPLES / "wordcount/src/data/words.txt") * 2)
    done = lambda: last_by(tmp_path, "count_bolt", "word", "count") == expected  # noqa: E731
    run_until(run_project, "wordcount", tmp_path, multilang, done, "the final counts",
              {"wordcount.rounds": 2})
    per_file = [{r["word"] for r in rs}
                for rs in read_jsonl(tmp_path, "count_bolt-*.jsonl").values()]
    assert not set.intersection(*per_file)  # fields grouping: a word lives in one task


@MODES
def test_multistream_named_streams_and_field_access(run_project, tmp_path, multilang):
    text = (EXAMPLES / "multistream/src/data/sentences.txt").read_text().splitlines()
    sentences = [line.strip() for line in text if line.strip()]
    expected_counts = Counter(w for s in sentences for w in WORD.findall(s.lower()))
    expected_lengths = {i: len(WORD.findall(s.lower())) for i, s in enumerate(sentences)}

    def done():
        lengths = {r["sentence_id"]: r["length"] for r in rows(tmp_path, "lengths")}
        return lengths == expected_lengths and \
            last_by(tmp_path, "word_counts", "word", "count") == expected_counts
    run_until(run_project, "multistream", tmp_path, multilang, done, "counts and lengths")
    assert len(rows(tmp_path, "lengths")) == len(sentences)  # exactly one line per sentence


@MODES
def test_reliable_pipeline_acks_every_tuple_after_its_replays(run_project, tmp_path,
                                                             multilang):
    count = 100

    def events():
        by_id = defaultdict(list)
        for r in rows(tmp_path, "numbers"):
            by_id[r["id"]].append(r["event"])
        return by_id
    run_until(run_project, "reliable", tmp_path, multilang,
              lambda: len(events()) == count and all(e[-1] == "ack" for e in events().values()),
              "every tuple acked")
    for n, seq in events().items():
        if n % 31 == 0:
            assert seq == ["fail"] * 4 + ["ack"]  # ReliableSpout gives up after max_fails
        elif n % 7 == 0:
            assert seq == ["fail", "ack"]  # replayed once, then fine
        else:
            assert seq == ["ack"]
    attempts = Counter(r["n"] for r in rows(tmp_path, "checker"))
    assert attempts == {n: 4 if n % 31 == 0 else 2 if n % 7 == 0 else 1 for n in range(count)}


@MODES
def test_batching_bolt_flushes_every_record_on_ticks(run_project, tmp_path, multilang):
    count = 200  # the spout paces itself at ~100/s: input spans several one-second ticks
    records = [("abcde"[i % 5], (i * 37 + 11) % 100) for i in range(count)]
    sizes, sums = Counter(c for c, _ in records), Counter()
    for c, v in records:
        sums[c] += v

    def totals():
        got_sizes, got_sums = Counter(), Counter()
        for r in rows(tmp_path, "totals"):
            got_sizes[r["category"]] += r["size"]
            got_sums[r["category"]] += r["sum"]
        return got_sizes, got_sums
    run_until(run_project, "batching", tmp_path, multilang,
              lambda: totals() == (sizes, sums), "every record in a batch",
              {"batching.count": count})
    assert len(rows(tmp_path, "totals")) > len(sizes)  # more than one tick-driven flush


@MODES
def test_direct_tuples_reach_the_task_they_were_sent_to(run_project, tmp_path, multilang):
    count = 30
    run_until(run_project, "direct", tmp_path, multilang,
              lambda: len(rows(tmp_path, "sink")) == count and
              len(rows(tmp_path, "mirror")) == count, "every tuple at sink and mirror",
              {"direct.count": count})
    sink_tasks = sorted(int(n.rsplit("-", 1)[1]) for n in read_jsonl(tmp_path, "sink-*.jsonl"))
    sink = {r["n"]: r["task"] for r in rows(tmp_path, "sink")}
    mirror = {r["n"]: r["task"] for r in rows(tmp_path, "mirror")}
    for r in rows(tmp_path, "router"):
        n = r["n"]
        assert sink[n] == r["direct_task"] == sink_tasks[n % len(sink_tasks)]
        assert r["probe_tasks"] == [mirror[n]]


@MODES
def test_shell_bolt_runs_a_multilang_script(run_project, tmp_path, multilang):
    expected = Counter(words(EXAMPLES / "shellbolt/src/data/sentences.txt"))
    run_until(run_project, "shellbolt", tmp_path, multilang,
              lambda: last_by(tmp_path, "counts", "word", "count") == expected,
              "the final counts")


@MODES
def test_rtac_counts_distinct_users_per_country(run_project, tmp_path, multilang):
    count = 400
    countries = ["us", "de", "fr", "br", "in", "jp", "ng"]
    users = defaultdict(set)
    for i in range(count):
        if i % 97 == 96:
            continue  # a blank user id, dropped by parse
        user = (i * 7919 + 13) % 389
        users[countries[(user * user + user // 5) % 7].upper()].add(user)
    expected = {c: len(u) for c, u in users.items()}
    run_until(run_project, "rtac", tmp_path, multilang,
              lambda: last_by(tmp_path, "country_counts", "country", "users") == expected,
              "users per country", {"rtac.count": count})


def test_durable_counts_every_word_of_its_log_and_commits_its_offset(run_project, tmp_path):
    lines = (EXAMPLES / "durable/src/data/log.txt").read_text().splitlines()
    expected = {(n, i) for n, line in enumerate(lines) for i, _ in enumerate(WORD.findall(line))}
    offsets = tmp_path / "offsets"

    def done() -> bool:
        counted = {(r["offset"], r["position"]) for r in rows(tmp_path, "count")}
        return counted == expected and (offsets / "log-0.offset").read_text() == str(len(lines))

    run_until(run_project, "durable", tmp_path, False, done, "every word counted, all acked",
              {"durable.offsets": str(offsets)})
    assert {r["event"] for r in rows(tmp_path, "log")} == {"start", "ack"}
