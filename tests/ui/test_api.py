"""Every route of the UI server against a real running topology; the numbers must agree
with the metrics the runtime writes (each container's metrics.jsonl)."""

from __future__ import annotations

import json
import re
import time

import pytest
from conftest import TOKEN
from prometheus_client.parser import text_string_to_metric_families
from testkit import wait_until

from heronbridge.runtime.health.actions import Action, append_action
from heronbridge.runtime.metrics_manager.sink import latest_samples
from heronbridge.runtime.telemetry import BUCKETS_PER_OCTAVE

pytestmark = pytest.mark.integration

HERON = "cluster=local&environ=default&topology=shown"
SPOUT, BOLT, SINK = "numbers", "work", "sink"


def heron(path: str, extra: str = "") -> str:
    return f"/topologies/{path}?{HERON}" + (f"&{extra}" if extra else "")


# -- while it runs -------------------------------------------------------------------


def test_the_page_and_the_lists_show_the_running_topology(served):
    wait_until(lambda: len(served.json(f"/ui/api/topology/{served.name}")["tasks"]) == 4, 30,
               "the tracker's metrics of every task")
    status, headers, body = served.get("/")
    assert status == 200 and "text/html" in headers["Content-Type"]
    assert b"/topology/shown" in body
    status, _, body = served.get("/topology/shown")
    assert status == 200
    for component in (SPOUT, BOLT, SINK):
        assert f"id='node-{component}'".encode() in body
    status, headers, body = served.get("/static/ui.js")
    assert status == 200 and "javascript" in headers["Content-Type"]
    data = served.json("/ui/api/topology/shown")
    assert data["state"] == "RUNNING" and data["id"] == served.launch.topology_id
    assert [c["name"] for c in data["components"]] == [SPOUT, SINK, BOLT]
    assert sorted(t["task"] for t in data["tasks"]) == [1, 2, 3, 4]
    wait_until(lambda: served.json("/ui/api/topology/shown")["timeline"], 20,
               "two samples for the timeline")
    status, _, body = served.get("/topology/shown/logs/1?lines=20")
    assert status == 200 and b"started (incarnation 0" in body


@pytest.mark.compat(*(f"rest/GET /{path}" for path in (
    "clusters", "health", "topologies", "topologies/states", "machines", "topologies/info",
    "topologies/config", "topologies/packingplan", "topologies/physicalplan",
    "topologies/logicalplan", "topologies/executionstate", "topologies/metadata",
    "topologies/schedulerlocation", "topologies/runtimestate")))
def test_the_heron_tracker_lists_and_describes_it(served):
    assert served.json("/clusters") == ["local"]
    status, _, body = served.get("/health")
    assert status == 200 and json.loads(body) == "ok"
    role = served.json("/topologies")["local"]
    assert list(role.values()) == [{"default": ["shown"]}]
    states = served.json("/topologies/states?cluster=local")
    assert states["local"]["default"]["shown"]["status"] == "Running"
    assert served.json(f"/machines?{HERON}") == {"local": {"default": {"shown": ["127.0.0.1"]}}}
    info = served.json(heron("info"))
    assert info["id"] == served.launch.topology_id and info["name"] == "shown"
    assert set(info) == {"execution_state", "id", "logical_plan", "metadata", "name",
                         "packing_plan", "physical_plan", "runtime_state",
                         "scheduler_location", "tmanager_location"}
    assert info["tmanager_location"]["server_port"] > 0
    assert served.json(heron("config"))["ui.interval"] == 0.002
    packing = served.json(heron("packingplan"))
    assert sorted(i["task_id"] for c in packing["container_plans"] for i in c["instances"]) \
        == [1, 2, 3, 4]
    pplan = served.json(heron("physicalplan"))
    assert sorted(pplan["instances"]) == ["container_0_numbers_1", "container_0_sink_2",
                                          "container_0_work_3", "container_0_work_4"]
    assert pplan["spouts"] == {SPOUT: ["container_0_numbers_1"]}
    assert pplan["stmgrs"]["stmgr-0"]["instance_ids"] == sorted(pplan["instances"])
    logical = served.json(heron("logicalplan"))
    assert list(logical["spouts"]) == [SPOUT] and sorted(logical["bolts"]) == [SINK, BOLT]
    assert logical["bolts"][BOLT]["inputs"] == [
        {"stream_name": "default", "component_name": SPOUT, "grouping": "SHUFFLE"}]
    assert logical["stages"] == 3
    execution = served.json(heron("executionstate"))
    assert execution["jobname"] == "shown" and execution["has_tmanager_location"]
    assert served.json(heron("metadata"))["instances"] == 4
    assert served.json(heron("schedulerlocation"))["name"] == "shown"
    assert served.json(heron("runtimestate"))["stmgrs"] == {"stmgr-0": {"is_registered": True}}


@pytest.mark.compat(*(f"rest/GET /topologies/{path}" for path in (
    "container/filedownload", "container/filedata", "container/filestats", "metrics/timeline",
    "metricstimeline")))
def test_the_heron_tracker_serves_timelines_and_container_files(served):
    now = int(time.time())

    def series() -> dict:
        timeline = served.json(heron("metrics/timeline", f"component={SPOUT}&starttime="
                                     f"{now - 60}&endtime={now + 60}&metricname=__emit-count"))
        return timeline["timeline"]["__emit-count"]["container_0_numbers_1"]

    found = wait_until(series, 20, "two samples of the spout")
    assert all(v >= 0 for v in found.values()) and sum(found.values()) > 0
    old = served.json(heron("metricstimeline", f"component={SPOUT}&starttime={now - 60}"
                            "&metricname=__emit-count"))
    assert all(isinstance(v, str) for v in
               old["timeline"]["__emit-count"]["container_0_numbers_1"].values())
    stats = served.json(heron("container/filestats", "container=0&path=logs"))
    assert stats["task-1-numbers.log"]["is_dir"] is False
    chunk = served.json(heron("container/filedata",
                              "container=0&path=logs/task-1-numbers.log&offset=0&length=64"))
    assert chunk["offset"] == 0 and 0 < chunk["length"] <= 64
    status, _, body = served.get(heron("container/filedownload",
                                       "container=0&path=logs/task-1-numbers.log"))
    assert status == 200 and b"started (incarnation 0" in body
    status, _, body = served.get(heron("container/filedata", "container=0&path=../../state"))
    assert status == 400 and json.loads(body).startswith("request failed:")


def test_unknown_topologies_fail_as_heron_and_storm_fail(served):
    status, headers, body = served.get("/topologies/info?cluster=local&environ=default"
                                       "&topology=nope")
    assert status == 500 and "x-process-time" in headers
    assert json.loads(body) == "request failed: 'Topology not found for local.default.nope'"
    status, _, body = served.get("/topologies/info?cluster=local")
    assert status == 400
    status, headers, body = served.get("/api/v1/topology/nope")
    assert status == 500 and headers["Content-Type"].startswith("application/json")
    assert json.loads(body)["error"] == "500 Server Error"


@pytest.mark.compat("rest/GET /api/v1/cluster/summary", "rest/GET /api/v1/nimbus/summary",
                    "rest/GET /api/v1/supervisor/summary", "rest/GET /api/v1/topology/summary",
                    "rest/GET /api/v1/topology/{topology}[/metrics]")
def test_the_storm_api_summaries(served):
    cluster = served.json("/api/v1/cluster/summary")
    assert re.fullmatch(r"\d+\.\d+\.\d+", cluster["stormVersion"])
    assert cluster["topologies"] == 1 and cluster["tasksTotal"] == 4
    assert cluster["supervisors"] == 1 and cluster["slotsUsed"] == 1
    nimbus = served.json("/api/v1/nimbus/summary")["nimbuses"][0]
    assert nimbus["status"] == "Leader"
    supervisor = served.json("/api/v1/supervisor/summary")["supervisors"][0]
    assert supervisor["host"] == "127.0.0.1" and supervisor["slotsUsed"] == 1
    summary = served.json("/api/v1/topology/summary")["topologies"]
    assert [(t["name"], t["id"], t["status"], t["tasksTotal"], t["workersTotal"])
            for t in summary] == [("shown", served.launch.topology_id, "ACTIVE", 4, 1)]
    page = served.json(f"/api/v1/topology/{served.launch.topology_id}?window=600")
    assert page["window"] == "600" and page["windowHint"] == "10m 0s"
    assert [s["window"] for s in page["topologyStats"]] == ["600", "10800", "86400",
                                                            ":all-time"]
    assert served.json(f"/api/v1/topology/{served.launch.topology_id}/metrics")["name"] \
        == "shown"  # Storm 2.8 serves the topology page here too
    # JSONP only for a request that carries the token: a page of another site cannot.
    status, _, body = served.get(f"/api/v1/topology/{served.launch.topology_id}"
                                 f"?callback=show&token={TOKEN}")
    assert status == 200 and body.startswith(b"show(") and body.endswith(b");")
    status, _, body = served.get(f"/api/v1/topology/{served.launch.topology_id}"
                                 "?callback=show")
    assert status == 200 and body.startswith(b"{")


@pytest.mark.compat("rest/GET /api/v1/topology/{topology}/component/{component}",
                    "rest/GET /topologies/exceptions", "rest/GET /topologies/exceptionsummary")
def test_a_raised_exception_reaches_heron_storm_and_the_page(served):
    (served.flags / f"raise-{BOLT}").touch()
    found = wait_until(lambda: served.json(heron("exceptions", f"component={BOLT}")), 30,
                       "the exception to reach the tracker")
    assert found[0]["instance_id"] in ("container_0_work_3", "container_0_work_4")
    assert "ValueError: work was told to fail" in found[0]["stacktrace"]
    assert "ui_components.py" in found[0]["stacktrace"] and found[0]["count"] == "1"
    summary = served.json(heron("exceptionsummary", f"component={BOLT}"))
    assert summary == [{"class_name": "ValueError", "lasttime": found[0]["lasttime"],
                        "firsttime": found[0]["firsttime"], "count": "1"}]
    topology = served.launch.topology_id
    component = served.json(f"/api/v1/topology/{topology}/component/{BOLT}")
    error = component["componentErrors"][-1]
    assert "work was told to fail" in error["error"] and error["errorPort"] > 0
    assert error["errorWorkerLogLink"].endswith(f"/topology/shown/logs/"
                                                f"{found[0]['instance_id'][-1]}")
    bolt = next(b for b in served.json(f"/api/v1/topology/{topology}")["bolts"]
                if b["boltId"] == BOLT)
    assert "ValueError: work was told to fail" in bolt["lastError"]
    assert len(bolt["lastError"]) <= 200 and isinstance(bolt["errorTime"], int)
    page = served.json("/ui/api/topology/shown")
    assert page["exceptions"][0]["message"] == "work was told to fail"
    crashed = int(found[0]["instance_id"][-1])
    wait_until(lambda: next(t for t in served.json("/ui/api/topology/shown")["tasks"]
                            if t["task"] == crashed)["restarts"] == 1, 30,
               "the page to count the restart")


def test_the_health_managers_actions_reach_the_page(served):
    action = Action(action="none", diagnosis="data skew", component=BOLT, task=3,
                    why="task 3 took 90% of the input", detail="more tasks cannot split one key",
                    time=time.time())
    append_action(served.tracker.statemgr, served.name, action)
    served.tracker.refresh(served.name)
    shown = served.json("/ui/api/topology/shown")["actions"][0]
    assert (shown["action"], shown["diagnosis"], shown["component"], shown["task"]) == \
        ("none", "data skew", BOLT, 3)
    assert shown["why"] == action.why and shown["detail"] == action.detail
    _, _, body = served.get("/topology/shown")
    assert b"id=actions" in body and b"more tasks cannot split one key" in body
    marked = served.json("/ui/api/topology/shown/series?window=900")["events"]
    labels = [e["label"] for e in marked if e["kind"] == "health"]
    assert labels[-1] == f"health: none {BOLT} task 3"  # marked on the charts' time axis


@pytest.mark.compat("rest/POST /api/v1/topology/{topology}/{action}",
                    partly="deactivate, refused without the token")
def test_changing_a_topology_needs_the_token(served):
    status, body = served.post("/ui/api/topology/shown/deactivate", token=None)
    assert status == 401 and b"token" in body
    status, body = served.post("/ui/api/topology/shown/loglevel?component=work&level=DEBUG",
                               token=None)
    assert status == 401 and b"token" in body
    status, _, _ = served.get("/ui/api/topology/shown/series?window=900",
                              headers={"Host": "evil.example:80"})
    assert status == 421  # the charts' data answers only requests that name this server
    status, body = served.post("/ui/api/topology/shown/deactivate", token="wrong")
    assert status == 401
    status, body = served.post(f"/api/v1/topology/{served.launch.topology_id}/deactivate",
                               token=None)
    assert status == 401 and json.loads(body)["error"] == "401 Unauthorized"
    assert served.json("/ui/api/topology/shown")["state"] == "RUNNING"


def test_beyond_loopback_reads_need_the_token_too(served):
    served.server.reads_need_token = True
    try:
        status, _, _ = served.get("/api/v1/topology/summary")
        assert status == 401
        status, _, _ = served.get("/metrics", {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200
        status, headers, _ = served.get(f"/?token={TOKEN}")
        assert status == 200 and "HttpOnly" in headers["Set-Cookie"]
        status, _, _ = served.get("/", {"Cookie": f"heronbridge_token={TOKEN}"})
        assert status == 200
    finally:
        served.server.reads_need_token = False


# -- deactivated: every count settled ------------------------------------------------------


@pytest.fixture(scope="module")
def settled(served):
    """Deactivate through the UI, then wait until the sinks' counts stop moving and the
    tracker holds exactly what the runtime last wrote; returns those records."""
    status, body = served.post("/ui/api/topology/shown/deactivate")
    assert status == 200, body
    assert json.loads(body)["state"] == 2  # PAUSED

    def still() -> dict | None:
        before = latest_samples(served.launch.workdir)
        time.sleep(2.5)
        after = latest_samples(served.launch.workdir)
        if {k: r["counters"] for k, r in before.items()} != \
                {k: r["counters"] for k, r in after.items()}:
            return None
        served.tracker.refresh("shown")
        report = {(t.component, t.task_id, t.container): dict(t.counters)
                  for t in served.tracker.find("shown").report.tasks}
        return after if report == {k: r["counters"] for k, r in after.items()} else None

    return wait_until(still, 60, "the counts to settle after deactivation", interval=0)


def _sum(records: dict, component: str, counter: str) -> float:
    return sum(r["counters"].get(counter, 0) for (c, _, _), r in records.items()
               if c == component)


def _mean_latency_ms(records: dict, component: str) -> float:
    total = count = 0.0
    for (c, _, _), r in records.items():
        if c != component:
            continue
        for bucket, n in r.get("histograms", {}).get("complete-latency", {}).items():
            total += n * 2 ** ((int(bucket) + 0.5) / BUCKETS_PER_OCTAVE) / 1000
            count += n
    return total / count


def test_deactivate_stops_the_spout(served, settled):
    assert served.json("/ui/api/topology/shown")["state"] == "PAUSED"
    summary = served.json("/api/v1/topology/summary")["topologies"][0]
    assert summary["status"] == "INACTIVE"
    assert _sum(settled, SPOUT, "emit-count") > 0


def test_storm_numbers_agree_with_the_runtime_metrics(served, settled):
    page = served.json(f"/api/v1/topology/{served.launch.topology_id}")
    spout = next(s for s in page["spouts"] if s["spoutId"] == SPOUT)
    assert spout["emitted"] == _sum(settled, SPOUT, "emit-count")
    assert spout["acked"] == _sum(settled, SPOUT, "ack-count")
    assert spout["failed"] == _sum(settled, SPOUT, "fail-count") + \
        _sum(settled, SPOUT, "timeout-count")
    assert spout["completeLatency"] == f"{_mean_latency_ms(settled, SPOUT):.3f}"
    for bolt in page["bolts"]:
        name = bolt["boltId"]
        executed = _sum(settled, name, "execute-count")
        assert bolt["executed"] == executed and bolt["tasks"] == (2 if name == BOLT else 1)
        assert bolt["acked"] == _sum(settled, name, "ack-count")
        assert bolt["emitted"] == _sum(settled, name, "emit-count")
        assert bolt["executeLatency"] == \
            f"{_sum(settled, name, 'execute-time-ns') / executed / 1e6:.3f}"
        assert 0 <= float(bolt["capacity"]) < 1
    all_time = page["topologyStats"][-1]
    assert all_time["window"] == ":all-time"
    assert all_time["emitted"] == sum(_sum(settled, c, "emit-count") for c in (SPOUT, BOLT,
                                                                               SINK))
    assert all_time["acked"] == spout["acked"]
    component = served.json(f"/api/v1/topology/{served.launch.topology_id}/component/{BOLT}")
    by_task = {int(e["id"].strip("[]").split("-")[0]): e["executed"]
               for e in component["executorStats"]}
    assert by_task == {task: r["counters"]["execute-count"]
                       for (c, task, _), r in settled.items() if c == BOLT}
    assert component["boltStats"][-1]["executed"] == _sum(settled, BOLT, "execute-count")
    spout_page = served.json(f"/api/v1/topology/{served.launch.topology_id}/component/{SPOUT}")
    assert spout_page["spoutSummary"][-1]["completeLatency"] == \
        round(_mean_latency_ms(settled, SPOUT), 3)


@pytest.mark.compat("rest/GET /topologies/metrics")
def test_heron_metrics_agree_with_the_runtime_metrics(served, settled):
    metrics = served.json(heron("metrics", f"component={BOLT}&metricname=__execute-count"
                                           "&metricname=__ack-count&metricname=error-count"
                                           "&metricname=__restarts"))
    assert metrics["component"] == BOLT and metrics["interval"] > 0
    for (c, task, container), r in settled.items():
        if c != BOLT:
            continue
        iid = f"container_{container}_{c}_{task}"
        assert float(metrics["metrics"]["__execute-count"][iid]) == \
            r["counters"]["execute-count"]
        assert float(metrics["metrics"]["__ack-count"][iid]) == r["counters"]["ack-count"]
        assert float(metrics["metrics"]["error-count"][iid]) == r["counters"]["error-count"]
        assert float(metrics["metrics"]["__restarts"][iid]) == r["incarnation"]


def test_prometheus_scrapes_the_same_numbers_under_conventional_names(served, settled):
    status, headers, body = served.get("/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    for family in families.values():
        assert re.fullmatch(r"heronbridge(_[a-z0-9]+)+", family.name), family.name
        for sample in family.samples:
            if family.type == "counter":
                assert sample.name.endswith(("_total", "_created")), sample.name
            for unit in ("ms", "millis", "ns", "mb", "kb"):
                assert not sample.name.endswith(f"_{unit}"), sample.name
        if family.name.endswith("_seconds") or family.name.endswith("_bytes"):
            assert family.type in ("gauge", "counter", "histogram")
    samples = {(s.name, s.labels.get("component"), s.labels.get("task")): s.value
               for f in families.values() for s in f.samples}
    for (c, task, _), r in settled.items():
        if c.startswith("__"):  # the stream manager's and the health manager's own
            continue
        labels = (c, str(task))
        assert samples[("heronbridge_tuples_emitted_total", *labels)] == \
            r["counters"]["emit-count"]
        assert samples[("heronbridge_errors_total", *labels)] == r["counters"]["error-count"]
        assert samples[("heronbridge_task_restarts_total", *labels)] == r["incarnation"]
        if c != SPOUT:
            assert samples[("heronbridge_tuples_executed_total", *labels)] == \
                r["counters"]["execute-count"]
            assert samples[("heronbridge_execute_seconds_total", *labels)] == \
                pytest.approx(r["counters"]["execute-time-ns"] / 1e9)
    assert samples[("heronbridge_complete_latency_seconds_count", SPOUT, "1")] == sum(
        settled[(SPOUT, 1, 0)]["histograms"]["complete-latency"].values())
    assert families["heronbridge_topology_running"].samples[0].value == 0


@pytest.mark.compat("rest/POST /api/v1/topology/{topology}/kill/{wait}")
def test_the_kill_button_stops_the_topology(served, settled):
    status, body = served.post(f"/api/v1/topology/{served.launch.topology_id}/kill/0")
    assert status == 200, body
    assert json.loads(body) == {"topologyOperation": "kill",
                                "topologyId": served.launch.topology_id, "status": "success"}
    assert served.json("/api/v1/topology/summary")["topologies"] == []
    status, _, body = served.get("/topology/shown")
    assert status == 200 and b"shown is not running" in body
