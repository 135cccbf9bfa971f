"""The report a reader opens: a real analysis (one value changed on the runtime side)
written as report.html and JSON, then the page loaded in a real browser."""

from __future__ import annotations

import json

import pytest
from synthetic_runs import scenario, simulate, write
from testkit import start_chromium

from heronbridge.conformance.analysis import FAIL, analyse
from heronbridge.conformance.conform import Outcome, SystemRun
from heronbridge.conformance.report import REPORT_FILE, write_html, write_json
from heronbridge.conformance.trace import schema

pytestmark = [pytest.mark.integration, pytest.mark.conformance]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory, spark) -> Outcome:
    run_dir = tmp_path_factory.mktemp("report") / "run"
    runtime = simulate(schema.RUNTIME)
    runtime.find(ev=schema.EMIT, component="counter")[3]["values"] = schema.canonical(
        ["<zebra>", 1])
    write(run_dir, simulate(schema.STORM), runtime)
    logs = run_dir / schema.RUNTIME / "logs"
    logs.mkdir(parents=True)
    runs = {schema.STORM: SystemRun(schema.STORM, True, 12.5, records=1000, startup=7.3),
            schema.RUNTIME: SystemRun(schema.RUNTIME, True, 4.3, records=1000, logs=logs,
                                      startup=1.5)}
    return Outcome(scenario(), run_dir, runs, analyse(run_dir, scenario(), spark=spark))


def test_the_page_and_json_say_what_failed(outcome, tmp_path):
    page = write_html(outcome)
    assert page == outcome.run_dir / REPORT_FILE
    text = page.read_text()
    assert 'id="summary" class="failed"' in text
    assert "&lt;zebra&gt;" in text and "<zebra>" not in text  # values are escaped
    assert 'href="runtime/logs"' in text

    write_json(outcome, tmp_path / "verdicts.json")
    saved = json.loads((tmp_path / "verdicts.json").read_text())
    assert saved["ok"] is False
    assert [(v["check"], v["subject"]) for v in saved["verdicts"] if v["verdict"] == FAIL] \
        == [("parity", "counter/default")]
    assert saved["runs"][schema.RUNTIME]["logs"] == str(outcome.run_dir / "runtime" / "logs")


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium()
    yield driver
    driver.quit()


def test_the_page_renders_verdicts_runs_and_plots(outcome, browser):
    from selenium.webdriver.common.by import By

    browser.get(write_html(outcome).as_uri())
    assert browser.title == "conformance: synthetic"
    summary = browser.find_element(By.ID, "summary")
    assert summary.get_attribute("class") == "failed"
    assert summary.text.startswith("some checks fail")

    rows = browser.find_elements(By.CSS_SELECTOR, "#verdicts tr")[1:]
    assert len(rows) == len(outcome.verdicts)
    failed = [r for r in rows if r.get_attribute("class") == "fail"]
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in failed] == ["counter/default"]
    assert "<zebra>" in failed[0].text
    # A failed verdict stands out: its cell is coloured, a passing one differently.
    passed = next(r for r in rows if r.get_attribute("class") == "pass")
    colour = lambda row: row.find_elements(By.TAG_NAME, "td")[-1].value_of_css_property(  # noqa: E731
        "background-color")
    assert colour(failed[0]) != colour(passed)

    cells = [[c.text for c in r.find_elements(By.TAG_NAME, "td")]
             for r in browser.find_elements(By.CSS_SELECTOR, "#runs tr")[1:]]
    assert [c[:5] for c in cells] == [[schema.STORM, "yes", "12.5", "7.3", "1,000"],
                                      [schema.RUNTIME, "yes", "4.3", "1.5", "1,000"]]
    link = browser.find_element(By.CSS_SELECTOR, "#runs a")
    assert link.get_attribute("href") == (outcome.run_dir / "runtime" / "logs").as_uri()

    images = browser.find_elements(By.TAG_NAME, "img")
    assert [i.get_attribute("alt") for i in images] == [
        "throughput over time", "complete latency distribution", "load per task"]
    for image in images:
        assert browser.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth", image) > 300
