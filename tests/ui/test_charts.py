"""The page's charts over time in a real browser (Debian's Chromium): every metric drawn
with axes, units and a legend; a bolt made slow shows as a spike in its execute latency;
an `update` is marked on the time axis; one task's lines on demand; a custom metric the
bolt reports reaches the page, /metrics and Storm UI's API; DEBUG set from the page shows
in the bolt's log tail and goes after its timeout; a share of the spout's tuples, sampled
from the page and from Storm's REST calls, shows live. Screenshots go to $HERONBRIDGE_UI_SCREENSHOTS
(default: the test's temporary folder)."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import TOKEN
from testkit import start_chromium, wait_until

from heronbridge.runtime import admin, control
from heronbridge.ui.logs import tasks_of

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

CHARTS = ["emitted", "executed", "execute_ms", "complete_p50_ms", "complete_p99_ms",
          "capacity", "backpressure", "restarts", "memory_mb"]


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium("1300,1700")
    yield driver
    driver.quit()


def _peak(browser, chart: str, line: str) -> float:
    found = browser.execute_script(
        "const p = document.querySelector(`#chart-${arguments[0]} path.line"
        "[data-line=\"${arguments[1]}\"]`); return p ? p.dataset.peak : null;", chart, line)
    return float(found) if found not in (None, "null") else -1.0


def test_charts_show_a_spike_an_update_and_one_task(served, browser, tmp_path_factory):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    shots = Path(os.environ.get("HERONBRIDGE_UI_SCREENSHOTS") or
                 tmp_path_factory.mktemp("screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    wait_until(lambda: len(served.json("/ui/api/topology/shown")["tasks"]) == 4, 30,
               "metrics of every task")
    browser.get(served.url("/topology/shown"))
    wait_until(lambda: _peak(browser, "executed", "work") > 0, 30,
               "the charts to draw the bolt's executed rate")
    charts = browser.find_elements(By.CSS_SELECTOR, "#charts svg.chart")
    assert [c.get_attribute("data-metric") for c in charts] == CHARTS
    latency = browser.find_element(By.ID, "chart-execute_ms")
    assert latency.get_attribute("data-unit") == "ms"
    assert "ms" in latency.find_element(By.CSS_SELECTOR, "text.unit").text
    assert len(latency.find_elements(By.CSS_SELECTOR, "text.ytick")) == 5
    assert len(latency.find_elements(By.CSS_SELECTOR, "text.xtick")) == 4
    legend = browser.find_element(By.ID, "chart-legend").text
    assert all(name in legend for name in ("numbers", "work", "sink", "update"))
    passed = wait_until(lambda: [r.text for r in browser.find_elements(
        By.CSS_SELECTOR, "#custom tbody tr") if r.text.startswith("work") and " passed " in r.text],
        20, "the bolt's custom metric on the page")
    assert len(passed) == 2 and all(" counter " in r for r in passed)  # both work tasks
    status, _, body = served.get("/metrics")
    assert status == 200
    samples = [line for line in body.decode().splitlines()
               if line.startswith("heronbridge_user_passed_total{")]
    # both work tasks, and the sink (a Work too)
    assert sorted(line.split('component="')[1].split('"')[0] for line in samples) == \
        ["sink", "work", "work"]
    assert "# TYPE heronbridge_user_passed_total counter" in body.decode()
    storm = served.json("/api/v1/topology/shown/component/work")
    assert {m["name"] for m in storm["customMetrics"]} == {"passed"}
    quiet = _peak(browser, "execute_ms", "work")
    assert 0 <= quiet < 5, quiet  # the bolt only passes tuples on

    (served.flags / "slow-work").touch()  # 20 ms a tuple
    try:
        wait_until(lambda: _peak(browser, "execute_ms", "work") >= 15, 40,
                   "the bolt's execute latency to spike on its chart")
    finally:
        (served.flags / "slow-work").unlink()
    latency = browser.find_element(By.ID, "chart-execute_ms")  # redrawn every 5 s
    top = float(latency.find_elements(By.CSS_SELECTOR, "text.ytick")[-1].text.replace(",", ""))
    assert top >= _peak(browser, "execute_ms", "work")  # the axis reaches the spike
    assert _peak(browser, "execute_ms", "sink") < 5  # only the slow bolt
    browser.save_screenshot(str(shots / "5-charts-spike.png"))

    # The log level from the page: the bolt's DEBUG lines in its task's log tail.
    browser.find_element(By.ID, "token").send_keys(TOKEN)
    Select(browser.find_element(By.ID, "level-component")).select_by_visible_text("work")
    Select(browser.find_element(By.ID, "level-name")).select_by_visible_text("DEBUG")
    timeout = browser.find_element(By.ID, "level-timeout")
    timeout.clear()
    timeout.send_keys("5")
    browser.find_element(By.ID, "level-set").click()
    wait_until(lambda: browser.find_element(By.ID, "level-result").text == "set", 20,
               "the page to set the level")
    Select(browser.find_element(By.ID, "log-task")).select_by_visible_text("task 3 (work)")

    def tail() -> str:
        browser.find_element(By.ID, "log-refresh").click()
        time.sleep(0.3)
        return browser.find_element(By.ID, "log").text

    wait_until(lambda: "work passes" in tail(), 20, "the bolt's DEBUG lines on the page")
    wait_until(lambda: "log level of 'root' back to" in tail(), 20, "the level put back")
    browser.save_screenshot(str(shots / "7-log-level.png"))

    admin.update(served.launch.statemgr, served.name, {"sink": 2})
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#chart-executed line.event"
                                                              "[data-kind=update]"), 60,
               "the update marked on the time axis")

    def table_is_the_plan() -> bool:  # the update renumbered the tasks: no dead rows
        placed = set(tasks_of(served.tracker.find("shown"), None))
        rows = {(r["task"], r["component"])
                for r in served.json("/ui/api/topology/shown")["tasks"]}
        return len(placed) == 5 and rows == placed
    wait_until(table_is_the_plan, 30, "the tasks table to list the new plan's tasks only")
    time.sleep(4)  # the old tasks' last metrics, published late, do not bring them back
    assert table_is_the_plan()

    Select(browser.find_element(By.ID, "chart-task")).select_by_value("1")
    wait_until(lambda: browser.find_element(By.ID, "chart-legend").text.startswith("task 1"),
               15, "the charts of task 1 alone")
    wait_until(lambda: _peak(browser, "emitted", "task 1") > 0, 15, "task 1's emitted rate")
    browser.save_screenshot(str(shots / "6-charts-one-task.png"))


def _executed(served, task: int) -> float:
    report = control.metrics(served.launch.statemgr, served.name)
    return next(t.counters.get("execute-count", 0.0) for t in report.tasks if t.task_id == task)


def test_a_live_tasks_stacks_flame_graph_and_memory(served, browser, tmp_path_factory):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(served.url("/topology/shown"))
    wait_until(lambda: browser.execute_script("return document.body.dataset.refreshed"), 20,
               "the page's first refresh")
    # A work task of the current packing plan (the first test's update renumbered them)
    task = tasks_of(served.tracker.find("shown"), "work")[-1][0]
    wait_until(lambda: browser.get(served.url("/topology/shown")) or browser.find_elements(
        By.CSS_SELECTOR, f"#profile-task option[value='{task}']"), 30,
        f"the page to list task {task}")
    (served.flags / "busy-work").touch()  # the bolt's time goes to crunch()
    try:
        time.sleep(3)
        browser.find_element(By.ID, "token").send_keys(TOKEN)
        Select(browser.find_element(By.ID, "profile-task")).select_by_value(str(task))
        stacks = browser.find_element(By.CSS_SELECTOR, "#profile button[data-kind=stacks]")

        def dumped() -> bool:  # one dump catches crunch() only while it runs: dump again
            if "crunch" in browser.find_element(By.ID, "profile-text").text:
                return True
            stacks.click()
            time.sleep(1)
            return "crunch" in browser.find_element(By.ID, "profile-text").text

        wait_until(dumped, 60, "the stacks of the busy bolt", on_timeout=lambda: browser.
                   find_element(By.ID, "profile-result").text)
        browser.find_element(By.CSS_SELECTOR, "#profile button[data-kind=memory]").click()
        wait_until(lambda: "VmRSS" in browser.find_element(By.ID, "profile-text").text, 20,
                   "the task's memory")
        # Its throughput while it is sampled, against the 5 s before (printed: measured).
        before = _executed(served, task)
        time.sleep(5)
        quiet = _executed(served, task) - before
        browser.find_element(By.CSS_SELECTOR, "#profile button[data-kind=flame]").click()
        time.sleep(0.5)
        during_from = _executed(served, task)
        wait_until(lambda: browser.find_element(By.ID, "profile-flame").is_displayed(), 60,
                   "the flame graph")
        during = _executed(served, task) - during_from
        print(f"task {task}: {quiet:.0f} tuples in 5 s before, {during:.0f} while sampled "
              f"(about 4.5 s)")
        assert browser.execute_script("return document.getElementById('profile-flame')"
                                      ".naturalWidth") > 0
        status, _ = served.post(f"/ui/api/topology/shown/tasks/{task}/flame?seconds=2",
                                token=None)
        assert status == 401  # behind the token
        request = urllib.request.Request(
            served.url(f"/ui/api/topology/shown/tasks/{task}/flame?seconds=2"), data=b"",
            headers={"X-Heronbridge-Token": TOKEN}, method="POST")
        with urllib.request.urlopen(request, timeout=60) as reply:
            svg = reply.read().decode()
            assert "script-src" not in reply.headers["Content-Security-Policy"]
        assert "crunch" in svg and "ui_components.py" in svg
    finally:
        (served.flags / "busy-work").unlink()
    shots = Path(os.environ.get("HERONBRIDGE_UI_SCREENSHOTS") or
                 tmp_path_factory.mktemp("screenshots"))
    browser.save_screenshot(str(shots / "8-flame-graph.png"))


@pytest.mark.compat("rest/POST /api/v1/topology/{topology}/debug/{action}/{pct}",
                    "rest/POST /api/v1/topology/{topology}/component/{component}/debug/"
                    "{action}/{pct}")
def test_sampled_tuples_live_on_the_page(served, browser, tmp_path_factory):
    """Storm UI's Debug: from the page, a share of the spout's tuples shows live; a
    restarted task goes on sampling; Storm's REST calls turn it on and off and its pages
    say so."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    def rows() -> list[list[str]]:  # in one call: the table is redrawn every 2 s
        return browser.execute_script(
            "return Array.from(document.querySelectorAll('#events tbody tr'), (tr) => "
            "Array.from(tr.cells, (td) => td.textContent));")

    browser.get(served.url("/topology/shown"))
    wait_until(lambda: browser.execute_script("return document.body.dataset.refreshed"), 20,
               "the page's first refresh")
    assert rows() == []
    status, _ = served.post("/ui/api/topology/shown/sampling?component=numbers&percent=50",
                            token=None)
    assert status == 401  # behind the token
    browser.find_element(By.ID, "token").send_keys(TOKEN)
    Select(browser.find_element(By.ID, "sample-component")).select_by_visible_text("numbers")
    percent = browser.find_element(By.ID, "sample-percent")
    percent.clear()
    percent.send_keys("50")
    browser.find_element(By.ID, "sample-on").click()
    wait_until(lambda: browser.find_element(By.ID, "sample-result").text == "sampling 50%",
               20, "the page to turn sampling on")
    found = wait_until(lambda: len(rows()) >= 20 and rows(), 30, "sampled tuples on the page")
    assert {r[1] for r in found} == {"numbers"} and {r[3] for r in found} == {"default"}
    numbers = [int(r[5].strip("[]")) for r in found]  # latest flush first
    assert len(set(numbers)) == len(numbers)
    # about half of the spout's numbers in that span, not all of them
    assert len(numbers) < 0.8 * (max(numbers) - min(numbers) + 1), numbers
    assert "numbers 50%" in browser.find_element(By.ID, "sampling-now").text
    shots = Path(os.environ.get("HERONBRIDGE_UI_SCREENSHOTS") or
                 tmp_path_factory.mktemp("screenshots"))
    browser.save_screenshot(str(shots / "9-sampled-tuples.png"))

    # Storm's REST API: the bolt at 100%; its page says so and links its events.
    status, body = served.post("/api/v1/topology/shown/component/work/debug/enable/100")
    assert status == 200 and json.loads(body) == {
        "topologyOperation": "debug", "topologyId": served.json(
            "/api/v1/topology/shown")["id"], "status": "success"}
    storm = wait_until(lambda: (c := served.json("/api/v1/topology/shown/component/work"))
                       ["debug"] and c, 20, "Storm's component page to show debug on")
    assert storm["samplingPct"] == 100
    link = storm["eventLogLink"]
    assert link.endswith("/ui/api/topology/shown/events?component=work")
    work = wait_until(lambda: served.json(link[link.index("/ui/"):])["events"], 20,
                      "the bolt's sampled tuples")
    assert {(e["component"], e["stream"], tuple(e["tasks"]) != ()) for e in work} == \
        {("work", "default", True)}
    # A restarted task hears the sampling again from its stream manager.
    task = work[-1]["task"]
    restarted_at = time.time() * 1000
    control.restart_task(served.launch.statemgr, served.name, task, "a test")
    wait_until(lambda: any(e["task"] == task and e["ts"] > restarted_at + 2000 for e in
                           served.json(f"{link[link.index('/ui/'):]}")["events"]), 40,
               "the restarted task sampling again")
    assert served.json("/api/v1/topology/shown")["debug"] is False  # not every component

    # Off, for every component at once, from Storm's topology-wide call.
    status, _ = served.post("/api/v1/topology/shown/debug/disable/0")
    assert status == 200
    wait_until(lambda: not served.json("/ui/api/topology/shown/events")["sampling"], 20,
               "sampling off")
    time.sleep(3)  # the tasks' last flush
    before = served.json("/ui/api/topology/shown/events")["events"][-1]["ts"]
    time.sleep(3)
    assert served.json("/ui/api/topology/shown/events")["events"][-1]["ts"] == before
    wait_until(lambda: "sampling: off" in browser.find_element(By.ID, "sampling-now").text,
               10, "the page to say sampling is off")
    status, body = served.post("/api/v1/topology/shown/component/work/debug/enable/101")
    assert status == 400 and b"from 0 to 100" in body
