"""The page in a real browser (Debian's Chromium): it loads for a running topology, its
graph shows every component, a bolt made slow turns red within seconds, the exception a
bolt raised shows with its stack trace, a task's log tail shows, and Deactivate (token
and confirmation) really stops the spouts. Screenshots go to $HERONBRIDGE_UI_SCREENSHOTS
(default: the test's temporary folder)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import TOKEN
from testkit import start_chromium, wait_until

from heronbridge.runtime import control

pytestmark = [pytest.mark.integration, pytest.mark.conformance]


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium("1300,1500")
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("HERONBRIDGE_UI_SCREENSHOTS") or
                  tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _node_class(browser, component: str) -> str:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, f"node-{component}").get_attribute("class")


def _emitted(served) -> float:
    return sum(t.counters.get("emit-count", 0) for t in
               control.metrics(served.launch.statemgr, served.name).tasks
               if t.component == "numbers")


def test_the_page_watches_and_controls_a_running_topology(served, browser, shots):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    wait_until(lambda: len(served.json("/ui/api/topology/shown")["tasks"]) == 4, 30,
               "metrics of every task")
    browser.get(served.url("/"))
    assert browser.find_element(By.CSS_SELECTOR, "#topologies a").text == "shown"
    browser.find_element(By.CSS_SELECTOR, "#topologies a").click()
    assert browser.title == "shown"
    wait_until(lambda: browser.execute_script("return document.body.dataset.refreshed"), 10,
               "the page's first refresh")
    nodes = browser.find_elements(By.CSS_SELECTOR, "#dag g.node")
    assert sorted(n.get_attribute("data-component") for n in nodes) == \
        ["numbers", "sink", "work"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#dag path.edge")) == 2
    assert "level-hot" not in _node_class(browser, "work")
    rows = browser.find_elements(By.CSS_SELECTOR, "#tasks tbody tr")
    assert len(rows) == 4
    browser.save_screenshot(str(shots / "1-running.png"))

    (served.flags / "slow-work").touch()
    slowed = time.monotonic()
    wait_until(lambda: "level-hot" in _node_class(browser, "work"), 30,
               "the slow bolt to turn red")
    took = time.monotonic() - slowed
    print(f"the slow bolt turned red after {took:.1f}s")
    assert "level-hot" not in _node_class(browser, "sink")
    assert browser.find_elements(By.CSS_SELECTOR, "#dag path.edge.hot")
    browser.save_screenshot(str(shots / "2-slow-bolt-red.png"))
    (served.flags / "slow-work").unlink()

    (served.flags / "raise-sink").touch()
    summary = wait_until(lambda: [s for s in browser.find_elements(
        By.CSS_SELECTOR, "#exceptions details summary") if "sink was told to fail" in s.text],
        30, "the exception panel to show the bolt's error")[0]
    summary.click()
    trace = browser.find_element(By.CSS_SELECTOR, "#exceptions details[open] pre").text
    assert "Traceback (most recent call last)" in trace
    assert "ValueError: sink was told to fail" in trace
    browser.save_screenshot(str(shots / "3-exception.png"))

    Select(browser.find_element(By.ID, "log-task")).select_by_value("2")
    wait_until(lambda: "=== restart 1" in browser.find_element(By.ID, "log").text, 20,
               "the sink's log tail with its restart")

    browser.find_element(By.CSS_SELECTOR, "button[data-action=deactivate]").click()
    assert "token" in browser.find_element(By.ID, "control-result").text  # none typed yet
    browser.find_element(By.ID, "token").send_keys(TOKEN)
    browser.find_element(By.CSS_SELECTOR, "button[data-action=deactivate]").click()
    alert = browser.switch_to.alert
    assert alert.text == "deactivate shown?"
    alert.accept()
    wait_until(lambda: browser.find_element(By.ID, "state").text == "PAUSED", 20,
               "the page to show the topology paused")
    assert browser.find_element(By.ID, "control-result").text == "deactivate: done"
    time.sleep(2)  # what was in flight settles
    before = _emitted(served)
    time.sleep(3)
    assert _emitted(served) == before  # the spout emits nothing more
    browser.save_screenshot(str(shots / "4-deactivated.png"))
