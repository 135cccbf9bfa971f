"""The compatibility matrix's recorder (the plugin's `compat` marker and `--compat-results`)
and its renderer (scripts/compatibility.py): what a run decided is what the matrix says."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def renderer():
    spec = importlib.util.spec_from_file_location("compatibility",
                                                  ROOT / "scripts" / "compatibility.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclass looks itself up there
    spec.loader.exec_module(sys.modules[spec.name])
    module = sys.modules[spec.name]
    return module


@pytest.mark.integration  # runs pytest in processes of its own
def test_each_worker_writes_the_cells_its_tests_decided(pytester, tmp_path):
    pytester.makepyfile(test_user="""
        import pytest

        @pytest.mark.compat("grouping/fields", on=("inprocess", "storm"))
        def test_passes():
            pass

        @pytest.mark.compat("grouping/all")
        def test_fails():
            assert False

        @pytest.mark.compat("grouping/global")
        def test_skips():
            pytest.skip("not here")

        @pytest.mark.compat("grouping/none")
        @pytest.mark.xfail(reason="known")
        def test_expected_to_fail():
            assert False

        @pytest.mark.compat("grouping/shuffle")
        @pytest.mark.parametrize("multilang", [
            pytest.param(False, marks=pytest.mark.compat(on="inprocess")),
            pytest.param(True, marks=pytest.mark.compat(on="multilang"))])
        def test_modes(multilang):
            assert not multilang

        def test_decides_nothing():
            pass
    """)
    results = tmp_path / "results"
    pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider",
                                  f"--compat-results={results}")
    files = sorted(results.iterdir())
    assert len(files) == 2 and {f.name.split("-")[0] for f in files} == {"gw0", "gw1"}
    cells = {(c["row"], c["column"], c["nodeid"].split("::")[1]): c["outcome"]
             for f in files for c in json.loads(f.read_text())["cells"]}
    assert cells == {
        ("grouping/fields", "inprocess", "test_passes"): "passed",
        ("grouping/fields", "storm", "test_passes"): "passed",
        ("grouping/all", "inprocess", "test_fails"): "failed",
        ("grouping/global", "inprocess", "test_skips"): "skipped",
        ("grouping/none", "inprocess", "test_expected_to_fail"): "failed",
        ("grouping/shuffle", "inprocess", "test_modes[False]"): "passed",
        ("grouping/shuffle", "multilang", "test_modes[True]"): "failed",
    }


def test_a_marker_without_rows_or_with_an_unknown_column_stops_the_run(pytester, tmp_path):
    pytester.makepyfile(test_user="""
        import pytest

        @pytest.mark.compat("grouping/fields", on="jython")
        def test_one():
            pass
    """)
    done = pytester.runpytest(f"--compat-results={tmp_path}")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    done.stderr.fnmatch_lines(["*test_one: @pytest.mark.compat expects rows and on= one of*"])


def test_a_cell_says_yes_only_when_every_test_deciding_it_passed():
    decide = renderer().decide
    assert decide({})["verdict"] == "no test"
    assert decide({"t::a": "passed", "t::b": "passed"}) == {
        "verdict": "yes", "note": "", "test": "t::a"}
    assert decide({"t::a": "passed", "t::b": "failed"}) == {
        "verdict": "partly", "note": "1 of 2 tests pass", "test": "t::b"}
    assert decide({"t::a": "failed"})["verdict"] == "no"
    assert decide({"t::a": "skipped"})["verdict"] == "not run"
    assert decide({"t::a": "passed:refusals only"}) == {
        "verdict": "partly", "note": "refusals only", "test": "t::a"}
    assert decide({"t::a": "passed:refusals only", "t::b": "passed"})["verdict"] == "yes"


def test_rows_come_from_the_lists_that_define_them_and_stray_cells_are_refused(tmp_path):
    from heronbridge.runtime.config import KEYS

    module = renderer()
    matrix = module.build({})
    rows = {s["key"]: [r["name"] for r in s["rows"]] for s in matrix["sections"]}
    assert set(KEYS) == set(rows["config"])
    assert {"submitTopology", "getTopologyInfo", "getUserTopology"} <= set(rows["nimbus"])
    assert "GET /api/v1/cluster/summary" in rows["rest"]
    assert "heronbridge run" in rows["cli"] and "sparse submit" in rows["sparse"]
    assert "Streamlet.reduce_by_key_and_window" in rows["heronpy"]
    assert all(c["verdict"] in ("no test", "n/a") for s in matrix["sections"]
               for r in s["rows"] for c in r["cells"].values())
    with pytest.raises(SystemExit, match="grouping/teleport on storm"):
        module.build({("grouping/teleport", "storm"): {"t::a": "passed"}})
    results = tmp_path / "env"
    results.mkdir()
    (results / "gw0-1.json").write_text(json.dumps({"cells": [
        {"row": "grouping/fields", "column": "storm", "nodeid": "tests/a.py::test_a@xdist-group",
         "outcome": "passed", "partly": None}]}))
    markdown = module.markdown(module.build(module.read_results(tmp_path)))
    assert '| fields | <abbr title="decided by tests/a.py::test_a">yes</abbr> | no test |' \
        in markdown


def test_a_cell_that_cannot_apply_says_n_a_with_why_and_no_test_may_decide_it():
    module = renderer()
    section = module.Section("grouping", "Groupings", ("storm", "inprocess"),
                             lambda: ["fields", "teleport"],
                             {("teleport", "storm"): "Storm has no teleporting"})
    module.SECTIONS, saved = (section,), module.SECTIONS
    try:
        matrix = module.build({("grouping/fields", "storm"): {"t::a": "passed"}})
        markdown = module.markdown(matrix)
        assert '| teleport | <abbr title="Storm has no teleporting">n/a</abbr> | no test |' \
            in markdown
        with pytest.raises(SystemExit, match="grouping/teleport on storm"):
            module.build({("grouping/teleport", "storm"): {"t::a": "passed"}})
    finally:
        module.SECTIONS = saved


def test_what_does_not_work_yet_comes_first_with_why_and_the_deciding_test():
    module = renderer()
    section = module.Section("grouping", "Groupings", ("storm", "inprocess"),
                             lambda: ["fields", "teleport", "shuffle"])
    module.SECTIONS, saved = (section,), module.SECTIONS
    try:
        matrix = module.build({
            ("grouping/fields", "storm"): {"t::a": "passed"},
            ("grouping/fields", "inprocess"): {"t::b": "passed:keys of one type only"},
            ("grouping/teleport", "storm"): {"t::c": "failed"},
            ("grouping/shuffle", "storm"): {"t::d": "passed"},
            ("grouping/shuffle", "inprocess"): {"t::d": "passed"}})
        markdown = module.markdown(matrix)
    finally:
        module.SECTIONS = saved
    assert "**6 cells: 3 yes, 1 partly, 1 no, 1 no test.**" in markdown
    first, tables = markdown.split("## Groupings")
    gaps = first.split("## What does not work yet")[1]
    assert gaps.index("| Groupings | teleport | Storm 2.8.3 | **no** | its test fails | `t::c` |") \
        < gaps.index("| Groupings | fields | runtime, in-process | **partly** | keys of one type "
                     "only | `t::b` |") < gaps.index("| Groupings | teleport | runtime, "
                                                     "in-process | **no test** |")
    assert "| shuffle |" not in gaps
    assert ('| fields | <abbr title="decided by t::a">yes</abbr> | <abbr title="keys of one '
            'type only; decided by t::b">**partly**</abbr> |') in tables
