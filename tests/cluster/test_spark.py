"""Topologies on a Spark standalone cluster (two workers, on 127.0.0.2 and 127.0.0.3) with
their state on a real ZooKeeper server: each container a long-running Spark task that
runs from the package Spark shipped. Every grouping across three containers on the two
workers; the at-least-once word count over a durable log with one whole container
SIGKILLed mid-run; the topology master SIGKILLed while tuples flow; `heronbridge list`
and `kill` through ZooKeeper. One Spark cluster and one ZooKeeper serve the module."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from rt_components import ConfigRecorder, KeySpout
from test_e2e_groupings import (  # noqa: F401 - run again here, on the Spark cluster's outcome
    COUNT,
    GROUPINGS,
    groupings_plan,
    received,
    test_all_and_global_and_none,
    test_custom_grouping_routes_as_the_function_says,
    test_direct_tuples_reach_the_task_they_were_sent_to,
    test_emit_returns_the_tasks_that_really_received_the_tuple,
    test_every_tuple_reaches_each_subscriber_once_and_is_acked,
    test_fields_sends_a_key_to_the_one_task_storm_would_choose,
    test_partial_key_uses_only_a_keys_two_candidates,
    test_shuffle_balances,
)
from test_e2e_hosts import acked, spread_plan
from testkit import HERONBRIDGE, read_jsonl, ui_verb, wait_until

from heronbridge.runtime import Grouping, TopologyBuilder, control
from heronbridge.runtime.config import KEYS
from heronbridge.runtime.plan import TaskLayout, round_robin
from heronbridge.runtime.plan.relocate import RELOCATE_ENV
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.scheduler.launch import Launch
from heronbridge.runtime.scheduler.spark import SparkOptions
from heronbridge.runtime.statemgr import (
    PACKING_PLANS,
    PHYSICAL_PLANS,
    SCHEDULERS,
    TMASTERS,
    TOPOLOGIES,
)

# The grouping tests imported above decide their matrix cells for the Spark scheduler here.
pytestmark = [pytest.mark.cluster, pytest.mark.integration, pytest.mark.compat(on="spark")]

WORKERS = {"127.0.0.2", "127.0.0.3"}
RUNTIME_TESTS = Path(__file__).resolve().parents[1] / "runtime"
DURABLE = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / "durable"
WORD = re.compile(r"[a-z]+")
PINNED = Path(__file__).resolve().parents[2] / "examples" / "virtualenvs"


def cli(tmp_path: Path, *args: str, timeout: float = 300) -> str:
    done = subprocess.run([HERONBRIDGE, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=tmp_path, check=False,
                          env={**os.environ, "HERONBRIDGE_STATE": ""})
    assert done.returncode == 0, f"heronbridge {args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def logs(spark, launch: Launch) -> str:
    scheduler = launch.scheduler_log.read_text(errors="replace") \
        if launch.scheduler_log.is_file() else ""
    return (f"--- {launch.scheduler_log}\n{scheduler[-6000:]}\n"
            + spark.logs("work-*/**/container-*/**/*.log", tail=3000))


def stmgrs(state, name) -> dict:
    pplan = state.get(PHYSICAL_PLANS, name)
    return {s.container: s for s in pplan.stmgrs} if pplan is not None else {}


def kill_container(state, name: str, container: int) -> int:
    """SIGKILL every process of one container (its executor's process group)."""
    group = os.getpgid(stmgrs(state, name)[container].pid)
    assert "scheduler.executor" in " ".join(psutil.Process(group).cmdline())
    os.killpg(group, signal.SIGKILL)
    return group


def task_processes(topology_id: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"])
            if "heronbridge.runtime.instance" in (p.info["cmdline"] or [])
            and topology_id in (p.info["cmdline"] or [])]


# -- every grouping, three containers on two workers ----------------------------------


@pytest.fixture(scope="module")
def grouping_run(spark, zookeeper, tmp_path_factory):
    """The runtime's grouping topology (tests/runtime/test_e2e_groupings.py) in three
    containers on the Spark cluster; what every task recorded, and where things ran."""
    out = tmp_path_factory.mktemp("records")
    plan = groupings_plan(out, containers=3)
    home = Home(tmp_path_factory.mktemp("hb"), zookeeper.uri("groupings"))
    state = home.open_statemgr()
    launch = Launch(plan, home, state, detached=True, spark=SparkOptions(spark.master))
    try:
        launch.start()
        hosts = {c: s.host for c, s in stmgrs(state, "groupings").items()}
        tasks = {p.pid: (p.cmdline(), p.cwd(), p.environ()) for p in
                 task_processes(launch.topology_id)}

        def all_acked():
            spouts = read_jsonl(out, "spout-keys-*.jsonl").values()
            return sum(r["event"] == "ack" for rs in spouts for r in rs) == 2 * COUNT

        wait_until(all_acked, 120, "every spout tuple to be acked",
                   on_timeout=lambda: logs(spark, launch))
        wait_until(lambda: sum(len(v) for k, v in read_jsonl(out).items()
                               if k.startswith("received-sink")) == 60, 30, "direct tuples",
                   on_timeout=lambda: logs(spark, launch))
    finally:
        launch.stop()
        state.close()
    return {"records": read_jsonl(out), "layout": TaskLayout.of(plan),
            "packing": round_robin(plan, 3), "hosts": hosts, "tasks": tasks}


@pytest.fixture(scope="module")
def outcome(grouping_run):
    """What the runtime's grouping tests check, from the run on Spark."""
    return grouping_run["records"], grouping_run["layout"], grouping_run["packing"]


@pytest.mark.compat("grouping/local_or_shuffle", on="spark")
def test_local_or_shuffle_stays_in_the_senders_container_when_it_has_a_target(outcome):
    """Three containers, two `localed` tasks: a sender whose container has one sends
    there; a sender in the third container has no local target and shuffles."""
    records, layout, packing = outcome
    targets = layout.component_tasks["localed"]
    local = {packing.container_of(t) for t in targets}
    assert len(local) == 2
    senders_without = set()
    for task, rows in received(records, "localed").items():
        for src, _values in rows:
            if packing.container_of(src) in local:
                assert packing.container_of(src) == packing.container_of(task)
            else:
                senders_without.add(task)
    assert senders_without == set(targets) or not senders_without


@pytest.mark.compat("config/topology.stmgrs")
def test_spark_placed_three_containers_on_two_workers(grouping_run):
    hosts = grouping_run["hosts"]
    assert sorted(hosts) == [0, 1, 2]
    assert set(hosts.values()) == WORKERS  # 2 cores per worker: never all on one


def test_each_task_ran_from_the_package_spark_shipped_to_its_worker(grouping_run, spark):
    """The components' folder reached each worker in the package: every task reads its
    plan relocated to the copy in its Spark executor's folder, listens as its worker,
    and imported its components from there (their bytecode is there)."""
    tasks = grouping_run["tasks"]
    assert len(tasks) == sum(p for _, p in GROUPINGS.values()) + 2 + 1 + 2
    for cmdline, cwd, environ in tasks.values():
        container = int(cmdline[cmdline.index("--container") + 1])
        host = grouping_run["hosts"][container]
        assert environ["HERONBRIDGE_HOST"] == host
        work = spark.work_dir(host)
        assert Path(cwd).is_relative_to(work)
        [(source, copy)] = [p for p in json.loads(environ[RELOCATE_ENV])
                            if p[0] == str(RUNTIME_TESTS)]
        assert Path(copy).is_relative_to(work)
        assert list(Path(copy).glob("__pycache__/rt_components.*.pyc"))
        assert "HERONBRIDGE_ZK_DIGEST" not in environ  # tasks never get the state's identity
        assert not any(k.startswith(("SPARK_", "PYSPARK_")) for k in environ)


# -- the durable word count: a whole container SIGKILLed mid-run --------------------------


@pytest.mark.compat("cli/heronbridge submit", "cli/heronbridge kill", "api/spouts", "api/bolts",
                    "api/ack", on="spark")
def test_durable_word_count_survives_a_whole_container_killed(spark, zookeeper, tmp_path,
                                                              capsys):
    """The many-hosts tutorial's command submits the example project; the container
    holding the spout is SIGKILLed mid-run. Spark starts it again, the spout reads again from its
    committed offset, every line ends acked and every word occurrence is counted."""
    lines = (DURABLE / "src" / "data" / "log.txt").read_text().splitlines()
    expected = {(n, i) for n, line in enumerate(lines)
                for i, _ in enumerate(WORD.findall(line.lower()))}
    out, offsets = tmp_path / "out", tmp_path / "offsets"  # shared, as by the hosts
    uri = zookeeper.uri("durable")
    home = Home(tmp_path / "home", uri)
    began = time.monotonic()
    cli(tmp_path, "submit", "--project", DURABLE, "-e", "prod", "--containers", 3,
        "--scheduler", "spark", "--spark-master", spark.master, "--state", uri,
        "--home", home.root, "-o", f"durable.offsets={offsets}",
        "-o", f"example.output.dir={out}", "-o", "topology.max.spout.pending=10")
    submitted = time.monotonic() - began
    state = home.open_statemgr()
    try:
        spout = next(c.id for c in state.get(PACKING_PLANS, "durable").containers
                     if any(i.component == "log" for i in c.instances))
        assert spout != 0  # the master is not in it: this is the spout's container alone

        def spout_rows():
            return [r for rs in read_jsonl(out, "log-*.jsonl").values() for r in rs]

        def on_timeout():
            return spark.logs("work-*/**/container-*/**/*.log", tail=3000) + \
                (home.workdir("durable") / "scheduler.log").read_text(errors="replace")[-5000:]

        wait_until(lambda: sum(r["event"] == "ack" for r in spout_rows()) >= 200, 60,
                   "the first lines acked", on_timeout=on_timeout)
        before = stmgrs(state, "durable")[spout]
        killed_at = time.monotonic()
        kill_container(state, "durable", spout)
        back = wait_until(lambda: stmgrs(state, "durable")[spout].pid != before.pid
                          and stmgrs(state, "durable")[spout], 120,
                          "the container back in the physical plan", on_timeout=on_timeout)
        in_plan = time.monotonic() - killed_at

        def acked_after_restart():
            rows = spout_rows()
            starts = [i for i, r in enumerate(rows) if r["event"] == "start"]
            return len(starts) >= 2 and any(r["event"] == "ack" for r in rows[starts[-1]:])

        wait_until(acked_after_restart, 60, "acks from the restarted spout",
                   on_timeout=on_timeout)
        recovered = time.monotonic() - killed_at
        assert back.host in WORKERS

        def done():
            counted = {(r["offset"], r["position"])
                       for rs in read_jsonl(out, "count-*.jsonl").values() for r in rs}
            return expected <= counted and \
                (offsets / "log-0.offset").read_text() == str(len(lines))

        wait_until(done, 180, "every word counted and the offset at the end", interval=1.0,
                   on_timeout=on_timeout)
        ids = {r["id"] for r in spout_rows() if r["event"] == "ack"}
        assert ids == set(range(len(lines)))
        starts = [r["offset"] for r in spout_rows() if r["event"] == "start"]
        assert starts[0] == 0 and 0 < starts[-1] < len(lines)  # read again from its offset
        with capsys.disabled():
            print(f"\ndurable word count on Spark: submitted in {submitted:.1f}s; container "
                  f"{spout} SIGKILLed, back in the physical plan after {in_plan:.1f}s (on "
                  f"{back.host}), its spout acking again after {recovered:.1f}s")
        cli(tmp_path, "kill", "durable", "--state", uri, "--home", home.root)
        assert state.get(TOPOLOGIES, "durable") is None
        assert state.get(SCHEDULERS, "durable") is None
    finally:
        state.close()


# -- the topology master SIGKILLed; list and kill through ZooKeeper ------------------------


def emitted(out) -> int:
    return sum(r["event"] == "emit" for rs in read_jsonl(out, "spout-*.jsonl").values()
               for r in rs)


@pytest.mark.compat("cli/heronbridge list", "cli/heronbridge deactivate",
                    "cli/heronbridge activate", "cli/heronbridge kill", "cli/heronbridge ui",
                    "cli/heronbridge set-log-level")
def test_a_killed_master_comes_back_while_tuples_flow(spark, zookeeper, tmp_path, capsys):
    name = "master-kill"
    # A short session: the dead master's ephemeral location goes after 4s, not 10s.
    uri = zookeeper.uri("master") + "?session_timeout=4"
    home = Home(tmp_path / "home", uri)
    state = home.open_statemgr()
    out = tmp_path / "out"
    plan = spread_plan(name, out, **{"test.count": 5000})
    total = 5000
    launch = Launch(plan, home, state, detached=True, spark=SparkOptions(spark.master))
    try:
        launch.start()
        listed = cli(tmp_path, "list", "--state", uri, "--home", home.root)
        hosts = {c: s.host for c, s in stmgrs(state, name).items()}
        for container, host in hosts.items():
            assert f"{container} on {host}" in listed, listed
        assert set(hosts.values()) == WORKERS and name in listed and "RUNNING" in listed
        with ui_verb(home.root, "--state", uri) as get:  # Storm UI's API, from ZooKeeper
            [shown] = get("/api/v1/topology/summary")["topologies"]
            assert (shown["name"], shown["status"], shown["workersTotal"]) == (name, "ACTIVE", 3)

        wait_until(lambda: len(acked(out)) > 100, 60, "acks",
                   on_timeout=lambda: logs(spark, launch))
        # Deactivated through ZooKeeper, the spout on its worker stops; activated, it goes on.
        where = ("--state", uri, "--home", home.root)
        assert "PAUSED" in cli(tmp_path, "deactivate", name, *where)
        time.sleep(1.0)  # the state change travels master -> stream manager -> spout
        paused = emitted(out)
        time.sleep(1.5)
        assert emitted(out) == paused, "the spout kept emitting while deactivated"
        assert "PAUSED" in cli(tmp_path, "list", *where)
        assert "RUNNING" in cli(tmp_path, "activate", name, *where)
        wait_until(lambda: emitted(out) > paused + 50, 30, "emits after activate",
                   on_timeout=lambda: logs(spark, launch))
        # A log level through ZooKeeper reaches every task on both workers.
        said = cli(tmp_path, "set-log-level", name, "DEBUG", "-t", "5", *where)
        assert "every component, logger root: DEBUG for 5s" in said, said
        task_logs = list(spark.folder.glob(f"work-*/**/heronbridge/{name}/container-*/logs/"
                                           "task-*.log"))
        assert len(task_logs) == len(state.get(PHYSICAL_PLANS, name).instances), task_logs
        wait_until(lambda: all("log level of 'root' set to DEBUG for 5s" in p.read_text()
                               for p in task_logs), 30, "the level set in every task",
                   on_timeout=lambda: logs(spark, launch))
        before = state.get(PHYSICAL_PLANS, name)
        node = f"{state.root}/{PHYSICAL_PLANS}/{name}"
        version = state.zk.exists(node).version
        master = state.get(TMASTERS, name)
        [tm] = [p for p in psutil.process_iter(["cmdline"])
                if "heronbridge.runtime.topology_master" in (p.info["cmdline"] or [])
                and name in (p.info["cmdline"] or [])]
        assert master.host == hosts[0]
        tm.kill()
        killed_at = time.monotonic()
        during = len(acked(out))
        wait_until(lambda: len(acked(out)) > during + 50, 30,
                   "tuples to keep flowing without a master",
                   on_timeout=lambda: logs(spark, launch))
        flowing = state.get(TMASTERS, name)
        assert flowing is None or flowing.server_port == master.server_port  # not back yet
        back = wait_until(lambda: (loc := state.get(TMASTERS, name)) is not None
                          and loc.server_port != master.server_port and loc, 60,
                          "the master to come back", on_timeout=lambda: logs(spark, launch))
        returned = time.monotonic() - killed_at

        # The new master publishes the plan again once every stream manager registered
        # with it: the same stream managers (host, port, pid) and the same tasks.
        wait_until(lambda: state.zk.exists(node).version > version
                   and control.metrics(state, name, 2.0).all_ready, 60,
                   "the new master to publish the plan and hear every stream manager",
                   on_timeout=lambda: logs(spark, launch))
        after = state.get(PHYSICAL_PLANS, name)
        assert after.stmgrs == before.stmgrs and after.instances == before.instances
        assert after.topology == before.topology
        assert back.host == master.host
        with capsys.disabled():
            print(f"\ntopology master on Spark: SIGKILLed, back after {returned:.1f}s "
                  f"(ZooKeeper session 4s); tuples flowed meanwhile")
        wait_until(lambda: acked(out) == set(range(total)), 120, "every id to be acked",
                   on_timeout=lambda: f"missing {sorted(set(range(total)) - acked(out))[:20]}"
                                      + logs(spark, launch))

        cli(tmp_path, "kill", name, "--state", uri, "--home", home.root)
        assert state.get(TOPOLOGIES, name) is None and state.get(SCHEDULERS, name) is None
        launch.process.wait(30)  # the scheduler (the Spark driver) has exited
        assert not task_processes(launch.topology_id)
    finally:
        launch.stop()
        state.close()


# -- a topology's own virtualenv travels with it ------------------------------------------


# Two submissions that each build a virtualenv's wheels (pip, CPU-bound), after the run's
# Spark cluster started in its setup when it comes first: 160 s in CI, over 300 s with the
# two cores four times oversubscribed, every step still on its way.
@pytest.mark.timeout(600)
def test_conflicting_pins_run_side_by_side_on_the_cluster(spark, zookeeper, tmp_path):
    """The semver 2 and semver 3 example projects, submitted at once: each ships its
    virtualenv as wheels, which the workers install with no package index into their
    own cache (by content hash), and every task, on either worker, reports the version
    its own project pins."""
    uri = zookeeper.uri("pins")
    home = Home(tmp_path / "home", uri)
    worker_home = tmp_path / "worker-home"  # the workers' ~/.heronbridge
    pins = {"semver2": "2.13.0", "semver3": "3.0.4"}
    for name in pins:
        (tmp_path / name).mkdir()
        cli(tmp_path, "submit", "--project", PINNED / name, "--containers", 2,
            "--scheduler", "spark", "--spark-master", spark.master, "--state", uri,
            "--home", home.root, "-o", f"pins.output.dir={tmp_path / name}",
            "--spark-conf", f"spark.executorEnv.HERONBRIDGE_HOME={worker_home}")
    try:
        for name, version in pins.items():
            wait_until(lambda name=name: len(list((tmp_path / name).glob("*.json"))) == 3, 120,
                       f"{name}'s tasks' reports",
                       on_timeout=lambda: spark.logs("work-*/**/container-*/**/*.log"))
            for path in (tmp_path / name).glob("*.json"):
                record = json.loads(path.read_text())
                assert record["semver"] == version, (name, record)
                assert Path(record["prefix"]).parent == worker_home / "virtualenvs", record
        logs = "".join(spark.logs(f"work-*/**/heronbridge/{name}/container-*/executor.log",
                                  tail=20000) for name in pins)  # theirs, not others'
        assert "building its virtualenv from the wheels shipped with it" in logs, logs
    finally:
        for name in pins:
            cli(tmp_path, "kill", name, "--state", uri, "--home", home.root)


# -- every config key a task reads, set to a value not its default -------------------------

# Keys whose effect this test sees on the cluster; the others it sees each task read.
SEEN = ("topology.reliability.mode", "topology.max.spout.pending", "topology.stmgrs",
        "topology.enable.message.timeouts", "topology.tick.tuple.freq.secs", "topology.debug",
        "heronbridge.tls.cert", "heronbridge.tls.key", "heronbridge.tls.ca")
READ = ("topology.message.timeout.secs", "topology.stateful.checkpoint.interval.secs",
        "topology.stateful.start.clean", "heronbridge.checkpoint.root",
        "heronbridge.checkpoint.kept", "heronbridge.checkpoint.buffer.bytes",
        "heronbridge.serializer", "heronbridge.backpressure.high.watermark.bytes",
        "heronbridge.backpressure.low.watermark.bytes", "heronbridge.held.max.bytes",
        "heronbridge.metrics.interval.secs", "heronbridge.heartbeat.interval.secs",
        "heronbridge.acking.buckets", "heronbridge.spout.burst", "heronbridge.emit.batch.time.ms",
        "heronbridge.emit.batch.size.bytes", "heronbridge.execute.batch.time.ms",
        "heronbridge.spout.latency.target.ms", "heronbridge.restart.backoff.secs",
        "heronbridge.log.max.bytes", "heronbridge.log.backup.count",
        "heronbridge.multilang.wake.secs")


@pytest.mark.compat("api/max spout pending", "api/tick tuples", *(f"config/{k}" for k in SEEN))
@pytest.mark.compat(*(f"config/{k}" for k in READ),
                    partly="every task on the cluster reads the value set; its effect is "
                           "checked in-process")
def test_every_config_key_reaches_the_tasks_on_the_cluster(spark, zookeeper, tmp_path):
    """Two containers over TLS, one on each worker; a spout with at most 7 pending, no
    message timeouts, ticks every half second, debug logs: the spout stops at 7 tuples
    that never fail, both bolt tasks (one in each container) get all 7 and the ticks,
    and every task read each key as it was set."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
    from tlskit import CertificateAuthority

    ca = CertificateAuthority(tmp_path / "ca")
    cert, key = ca.issue("127.0.0.1")
    config = {
        "topology.reliability.mode": "ATLEAST_ONCE", "topology.max.spout.pending": 7,
        "topology.message.timeout.secs": 0.5, "topology.enable.message.timeouts": False,
        "topology.tick.tuple.freq.secs": 0.5, "topology.debug": True, "topology.stmgrs": 2,
        "topology.stateful.checkpoint.interval.secs": 7, "topology.stateful.start.clean": True,
        "heronbridge.checkpoint.root": str(tmp_path / "checkpoints"),
        "heronbridge.checkpoint.kept": 2, "heronbridge.checkpoint.buffer.bytes": 1 << 20,
        "heronbridge.serializer": "json",
        "heronbridge.backpressure.high.watermark.bytes": 2 << 20,
        "heronbridge.backpressure.low.watermark.bytes": 512 << 10,
        "heronbridge.held.max.bytes": 8 << 20, "heronbridge.metrics.interval.secs": 0.5,
        "heronbridge.heartbeat.interval.secs": 1.0, "heronbridge.acking.buckets": 4,
        "heronbridge.spout.burst": 64, "heronbridge.emit.batch.time.ms": 2.0,
        "heronbridge.emit.batch.size.bytes": 8192, "heronbridge.execute.batch.time.ms": 2.0,
        "heronbridge.spout.latency.target.ms": 10.0, "heronbridge.restart.backoff.secs": 0.3,
        "heronbridge.log.max.bytes": 1 << 20, "heronbridge.log.backup.count": 2,
        "heronbridge.multilang.wake.secs": 0.25,
        "heronbridge.tls.cert": str(cert), "heronbridge.tls.key": str(key),
        "heronbridge.tls.ca": str(ca.path)}
    # heronbridge.host: see scripts/compatibility.py; the orphan bound is the scheduler's
    # (tests/runtime/test_scheduler_stop.py), which no task reads.
    assert set(SEEN + READ) == set(KEYS) - {"heronbridge.host",
                                            "heronbridge.scheduler.orphan.secs"}
    assert all(config[k] != KEYS[k].default for k in SEEN + READ)
    out = tmp_path / "out"
    b = TopologyBuilder("configured", {**config, "test.out": str(out), "test.count": 1000})
    b.spout("keys", KeySpout)
    b.bolt("recorder", ConfigRecorder, inputs={"keys": Grouping.ALL}, par=2)
    plan = b.build()
    home = Home(tmp_path / "home", zookeeper.uri("configured"))
    state = home.open_statemgr()
    launch = Launch(plan, home, state, detached=True, spark=SparkOptions(spark.master))

    def bolts(event: str) -> dict[str, list]:
        return {name: [r for r in rows if r["event"] == event]
                for name, rows in read_jsonl(out, "config-*.jsonl").items()}

    try:
        launch.start()
        hosts = {c: s.host for c, s in stmgrs(state, "configured").items()}
        assert set(hosts.values()) == WORKERS
        wait_until(lambda: all(len(r) >= 7 for r in bolts("tuple").values())
                   and len(bolts("tuple")) == 2 and all(len(r) >= 3 for r in
                                                        bolts("tick").values()), 60,
                   "both bolt tasks to get 7 tuples and ticks",
                   on_timeout=lambda: logs(spark, launch))
        time.sleep(1.5)  # three message timeouts, were they on
        spout = [r for rs in read_jsonl(out, "spout-*.jsonl").values() for r in rs]
        task_logs = spark.logs("work-*/**/heronbridge/configured/container-*/**/task-*.log",
                               tail=20000)
    finally:
        launch.stop()
        state.close()
    assert [r["event"] for r in spout] == ["emit"] * 7  # at most 7 pending; none failed
    for name, rows in bolts("tuple").items():
        assert sorted(r["values"][1] for r in rows) == list(range(7)), name
    for name, rows in bolts("tick").items():
        assert all(r["values"] == [0.5] for r in rows), name
    for name, [record] in bolts("config").items():
        assert record["raw"] == {**{k: None for k in KEYS}, **config}, name
        read = record["read"]
        assert (read["max_spout_pending"], read["tick_freq_secs"], read["xor_buckets"],
                read["emit_batch_secs"], read["serializer"]) == (7, 0.5, 4, 0.002, "json")
    assert " DEBUG rt_components: recording " in task_logs  # topology.debug
