"""The Flux YAML a Storm run submits, for the example projects: streamparse's own
topology, with the run's options, the serializer, the tracing layer and direct streams."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from heronbridge.compat.streamparse import load_project
from heronbridge.conformance.scenario import Scenario
from heronbridge.conformance.storm import StormError
from heronbridge.conformance.storm import flux as fluxes
from heronbridge.conformance.trace import schema
from heronbridge.conformance.trace.proxy import MODULE as PROXY
from heronbridge.conformance.trace.traced_run import MODULE as TRACED_RUN

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "storm_topologies"
FAULTS = [{"component": "count_bolt", "task_index": None, "kind": "fail", "every": 7}]


def scenario_for(name: str, **kw) -> Scenario:
    return Scenario(name=name, project=EXAMPLES / name, **kw)


def build(name: str, trace: bool = True, **kw) -> tuple[dict, object]:
    scenario = scenario_for(name, **kw)
    project = load_project(scenario.project, None, None, scenario.storm_options())
    return fluxes.flux_topology(project, scenario, Path("/runs/x/storm/traces"), trace), project


def components(flux: dict) -> dict[str, dict]:
    return {c["id"]: c for c in [*flux.get("spouts", []), *flux.get("bolts", [])]}


def unwrap(argv: list[str]) -> list[str]:
    """The component's own command inside the tracing layer's command line."""
    if argv[:3] == [sys.executable, "-m", TRACED_RUN]:
        return ["streamparse_run", *argv[3:]]
    assert argv[:3] == [sys.executable, "-m", PROXY], argv
    assert argv[argv.index("--serializer") + 1] == "json"
    return argv[argv.index("--") + 1:]


@pytest.mark.parametrize("example", ["wordcount", "multistream", "batching", "direct",
                                     "shellbolt", "rtac", "reliable"])
def test_every_shell_component_runs_traced_with_the_serializer(example):
    flux, project = build(example)
    comps = components(flux)
    assert set(comps) == set(project.plan.components)
    for name, comp in comps.items():
        argv = comp["constructorArgs"][0]
        command = unwrap(argv)
        shell = project.topology.specs[[s.name for s in project.topology.specs].index(name)]
        original = shell.component_object.shell
        if original.execution_command == "streamparse_run":  # the hook inside
            assert argv[2] == TRACED_RUN, name
            assert command == ["streamparse_run", f"-s json {original.script}"], name
        else:  # a plain multilang program keeps its own command line, under the proxy
            assert argv[2] == PROXY, name
            assert command == [original.execution_command, original.script], name


def test_without_tracing_the_commands_are_what_sparse_run_gives_storm():
    flux, _ = build("wordcount", trace=False)
    comps = components(flux)
    assert comps["count_bolt"]["constructorArgs"][0] == [
        "streamparse_run", "-s json bolts.wordcount.WordCountBolt"]
    assert comps["word_spout"]["constructorArgs"][0] == [
        "streamparse_run", "-s json spouts.words.WordSpout"]


def test_a_plain_shell_bolt_gets_no_serializer_flag():
    flux, _ = build("shellbolt", trace=False)
    assert components(flux)["split"]["constructorArgs"][0] == ["python", "splitsentence.py"]


def test_run_options_are_set_over_the_projects_and_the_scenarios_own():
    flux, project = build("wordcount", config={"topology.message.timeout.secs": 7,
                                               "topology.workers": 3},
                          options={"wordcount.rounds": 2}, faults=FAULTS)
    config = flux["config"]
    assert config["topology.enable.message.timeouts"] is True
    assert config["topology.disable.loadaware.messaging"] is True
    assert config["topology.workers"] == 1
    assert config["topology.message.timeout.secs"] == 7
    assert config["wordcount.rounds"] == 2
    assert config["topology.acker.executors"] == project.options["topology.acker.executors"]
    assert config[schema.TRACE_DIR] == "/runs/x/storm/traces"
    assert config[schema.FAULTS] == FAULTS
    assert config[schema.BOUND] == {"tuples": 10_000} and config[schema.SEED] == 0
    assert fluxes.MULTILANG_SERIALIZER not in config


def test_groupings_and_streams_are_streamparses():
    flux, project = build("multistream")
    streams = {(s["from"], s["to"], s["grouping"]["streamId"]): s["grouping"]
               for s in flux["streams"]}
    assert streams[("sentences", "splitter", "default")]["type"] == "SHUFFLE"
    assert streams[("splitter", "word_counts", "words")] == {
        "streamId": "words", "type": "FIELDS", "args": ["word"]}
    assert streams[("splitter", "lengths", "lengths")]["type"] == "SHUFFLE"
    splitter = components(flux)["splitter"]
    named = {m["args"][0]: m["args"][1] for m in splitter["configMethods"]
             if m["name"] == "setNamedStream"}
    assert named == {"words": ["word", "sentence_id"], "lengths": ["sentence_id", "length"]}
    assert flux == {**project.topology.to_flux_dict("multistream"), "config": flux["config"],
                    "spouts": flux["spouts"], "bolts": flux["bolts"]}


def test_component_config_survives():
    flux, _ = build("batching")
    totals = components(flux)["totals"]
    assert {"name": "addComponentConfig", "args": ["topology.tick.tuple.freq.secs", 1]} in \
        totals["configMethods"]
    assert totals["parallelism"] == 2


def test_direct_streams_are_declared_direct_and_read_by_our_serializer():
    flux, _ = build("direct")
    comps = components(flux)
    router = comps["router"]
    assert router["className"] == fluxes.DIRECT_SHELL_BOLT
    assert {"name": fluxes.SET_DIRECT_STREAM, "args": ["routed"]} in router["configMethods"]
    assert {"name": "setNamedStream", "args": ["routed", ["n"]]} in router["configMethods"]
    for name in ("numbers", "mirror", "sink"):
        assert comps[name]["className"] in (fluxes.FLUX_SHELL_BOLT, fluxes.FLUX_SHELL_SPOUT)
        assert not any(m["name"] == fluxes.SET_DIRECT_STREAM
                       for m in comps[name]["configMethods"])
    direct = [s for s in flux["streams"] if s["grouping"]["type"] == "DIRECT"]
    assert [(s["from"], s["to"], s["grouping"]["streamId"]) for s in direct] == \
        [("router", "sink", "routed")]
    assert flux["config"][fluxes.MULTILANG_SERIALIZER] == fluxes.DIRECT_EMIT_SERIALIZER


def test_a_serializer_the_user_chose_is_kept():
    flux, _ = build("direct", config={fluxes.MULTILANG_SERIALIZER: "com.example.Mine"})
    assert flux["config"][fluxes.MULTILANG_SERIALIZER] == "com.example.Mine"


def test_the_yaml_reads_back_as_the_topology(tmp_path):
    flux, _ = build("direct", faults=[])
    path = fluxes.write_flux(flux, tmp_path / "topology.yaml")
    assert yaml.safe_load(path.read_text()) == flux


def test_msgpack_projects_are_refused(tmp_path):
    import json
    import shutil

    shutil.copytree(EXAMPLES / "wordcount", tmp_path / "wc")
    config = json.loads((tmp_path / "wc" / "config.json").read_text())
    config["serializer"] = "msgpack"
    (tmp_path / "wc" / "config.json").write_text(json.dumps(config))
    scenario = Scenario(name="wc", project=tmp_path / "wc")
    project = load_project(scenario.project)
    with pytest.raises(StormError, match="serializer is 'msgpack'.*expected serializer 'json'"):
        fluxes.flux_topology(project, scenario, tmp_path / "traces")


def test_java_components_run_in_the_tracing_wrapper_with_their_parallelism():
    import json

    from heronbridge.conformance.trace import java

    scenario = scenario_for("javamix", faults=[{"component": "count", "task_index": None,
                                                "kind": "drop", "every": 5}])
    project = load_project(scenario.project, "javamix", None, scenario.storm_options())
    flux = fluxes.flux_topology(project, scenario, Path("/runs/x/storm/traces"))
    made = components(flux)
    assert made["sentences"]["className"] == java.TRACED_SPOUT
    assert made["count"]["className"] == java.TRACED_BOLT
    assert made["count"]["parallelism"] == 2  # streamparse's Flux text leaves it out
    spec, options = made["count"]["constructorArgs"]
    assert json.loads(spec) == {"class": "javamix.CountBolt", "args": [{"string": "word"}]}
    assert json.loads(options) == {schema.TRACE_DIR: "/runs/x/storm/traces",
                                   schema.FAULTS: scenario.faults,
                                   schema.BOUND: scenario.bound()}
    # the Python bolt between them keeps its own tracing
    assert unwrap(made["split"]["constructorArgs"][0])[:1] == ["streamparse_run"]
    untraced = components(fluxes.flux_topology(project, scenario, Path("/t"), trace=False))
    assert untraced["count"]["className"] == "javamix.CountBolt"
    assert untraced["count"]["parallelism"] == 2
