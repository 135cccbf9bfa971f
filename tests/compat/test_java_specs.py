"""streamparse's JavaSpout/JavaBolt specs in the plan: the JavaObject's class and
args_list as the JVM task host reads them, and where a project's Java code is."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from streamparse.dsl.util import to_java_arg

from heronbridge.compat import CompatError
from heronbridge.compat.java import (
    SERIALIZED_DIR,
    check_classes,
    is_java_grouping,
    java_config,
    java_object,
    lein_target,
    project_jars,
)
from heronbridge.compat.streamparse import load_project
from heronbridge.runtime.plan.java import java_groupings, needs_jvm
from heronbridge.runtime.scheduler import jvm

JAVAMIX = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies" / "javamix"


def test_args_list_keeps_the_kinds_streamparse_gave_it():
    obj = SimpleNamespace(java_object=SimpleNamespace(
        full_class_name="a.B", args_list=[to_java_arg(a) for a in (7, 2.5, True, "x", b"\0")]))
    assert java_object("here", obj) == {"class": "a.B", "args": [
        {"long": 7}, {"double": 2.5}, {"bool": True}, {"string": "x"}, {"binary": "AA=="}]}
    with pytest.raises(CompatError, match="here: expected a JavaObject"):
        java_object("here", SimpleNamespace(java_object=None, serialized_java=b"\xac\xed"))


def test_a_serialized_component_is_written_as_it_came_for_the_jvm(tmp_path):
    # The head of what ObjectOutputStream writes for a javamix.SplitBolt.
    name = b"javamix.SplitBolt"
    data = b"\xac\xed\x00\x05sr" + len(name).to_bytes(2, "big") + name + b"\x00" * 12
    obj = SimpleNamespace(java_object=None, serialized_java=data)
    src, resources = tmp_path / "staging", tmp_path / "resources"
    class_path, config = java_config("here", obj, "split/1", resources, src)
    assert class_path == "java:javamix.SplitBolt"
    assert config == {jvm.COMPONENT: {
        "serialized": str(resources / SERIALIZED_DIR / "split%2F1.ser")}}
    assert (src / SERIALIZED_DIR / "split%2F1.ser").read_bytes() == data
    with pytest.raises(CompatError, match="here: expected a Java serialized object .*"
                                          "received 5 bytes starting '800495032e'"):
        java_config("here", SimpleNamespace(java_object=None, serialized_java=b"\x80\x04\x95\x03."),
                    "x", resources, src)


def test_a_java_custom_grouping_is_told_from_a_python_one():
    assert is_java_grouping('{"serialized": "/r/.java-objects/x.ser"}')
    assert not is_java_grouping("groupings.by_parity")
    assert not is_java_grouping(None)


def test_a_java_custom_grouping_loads_with_a_sender_that_is_not_java(tmp_path):
    """A serialized custom grouping (storm jar) and a JavaObject one (streamparse's
    Grouping.custom_object) on a shell spout's stream: both the JVM grouping host's specs,
    which run beside the sending task whatever its language."""
    from collections import namedtuple

    from heronbridge.compat.streamparse import plan_of_specs

    stream_id = namedtuple("GlobalStreamId", "componentId streamId")
    data = b"\xac\xed\x00\x05sr\x00\x03a.G" + b"\x00" * 8
    plain = dict(fields=None, shuffle=None, all=None, none=None, direct=None,
                 local_or_shuffle=None, custom_object=None, custom_serialized=None)
    serialized = SimpleNamespace(**{**plain, "custom_serialized": data})
    made = SimpleNamespace(**{**plain, "custom_object": SimpleNamespace(
        full_class_name="a.H", args_list=[SimpleNamespace(long_arg=3)])})
    words = SimpleNamespace(
        name="words", par=1, config=None, inputs={},
        outputs={"default": SimpleNamespace(output_fields=["w"], direct=False)},
        component_object=SimpleNamespace(java_object=None, serialized_java=None,
                                         shell=SimpleNamespace(execution_command="node",
                                                               script="words.js")))
    sinks = [SimpleNamespace(
        name=name, par=1, config=None, outputs={},
        inputs={stream_id("words", "default"): grouping},
        component_object=SimpleNamespace(java_object=None, serialized_java=data, shell=None))
        for name, grouping in (("sink", serialized), ("sunk", made))]
    plan = plan_of_specs("t", [words, *sinks], {"words"}, {}, "json", None, False,
                         tmp_path / "r", tmp_path / "s")
    [sink], [sunk] = plan.components["sink"].inputs, plan.components["sunk"].inputs
    assert json.loads(sink.grouping.custom) == {
        "serialized": str(tmp_path / "r" / SERIALIZED_DIR / "sink.words.default.ser")}
    assert json.loads(sunk.grouping.custom) == {"class": "a.H", "args": [{"long": 3}]}
    assert all(is_java_grouping(i.grouping.custom) for i in (sink, sunk))
    assert java_groupings(plan, "words") == [("default", "sink"), ("default", "sunk")]
    assert needs_jvm(plan) and not java_groupings(plan, "sink")


def test_the_mixed_example_loads_its_java_components(tmp_path):
    project = load_project(JAVAMIX, "javamix", None, {}, False, tmp_path / "r", None)
    plan = project.plan
    assert plan.components["sentences"].config[jvm.COMPONENT] == \
        {"class": "javamix.SentenceSpout", "args": []}
    assert plan.components["count"].class_path == "java:javamix.CountBolt"
    assert plan.components["count"].config[jvm.COMPONENT]["args"] == [{"string": "word"}]
    assert not jvm.is_java(plan, "split")
    assert list(plan.components["count"].outputs["default"].fields) == ["word", "count"]


def test_project_jars_are_leins_standalone_jar_then_the_folders(tmp_path):
    (tmp_path / "project.clj").write_text('(defproject p "1" :target-path "_build")')
    assert lein_target(tmp_path) == tmp_path / "_build"
    (tmp_path / "_build").mkdir()
    for name in ("p-1.jar", "p-1-standalone.jar"):
        (tmp_path / "_build" / name).write_bytes(b"")
    (tmp_path / "jars").mkdir()
    (tmp_path / "jars" / "b.jar").write_bytes(b"")
    assert project_jars(tmp_path, tmp_path / "jars") == \
        [tmp_path / "_build" / "p-1-standalone.jar", tmp_path / "jars" / "b.jar"]
    with pytest.raises(CompatError, match="a folder of the project's Java jars"):
        project_jars(tmp_path, tmp_path / "nowhere")


def jar(path: Path, *classes: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name in classes:
            z.writestr(name.replace(".", "/") + ".class", b"\xca\xfe\xba\xbe")
    return path


def test_a_java_class_on_no_jar_is_refused_before_the_start_with_where_jars_go(tmp_path):
    """Not a 3 kB classpath from the JVM after three restarts: the project's jars by name,
    lein's folder, --java-jars, at once."""
    project = load_project(JAVAMIX, "javamix", None, {}, False, tmp_path / "r", None)
    plan = project.plan
    storm = [jar(tmp_path / "storm" / f"storm-{i}.jar", f"org.apache.storm.C{i}")
             for i in range(80)]
    mine = jar(tmp_path / "jars" / "words.jar", "javamix.CountBolt")
    plan.config[jvm.CLASSPATH] = [str(p) for p in (*storm, mine)]
    with pytest.raises(CompatError) as refused:
        check_classes(plan, [mine], JAVAMIX, tmp_path / "jars")
    text = str(refused.value)
    assert text.startswith("topology 'javamix', component 'sentences', task 5: expected a "
                           "class on the task's classpath, received 'javamix.SentenceSpout', "
                           "which none of its jars holds (the project's: words.jar; "), text
    assert f"--java-jars: {tmp_path / 'jars'}" in text and "--java-jars DIR" in text
    assert f"`lein jar` writes it to {lein_target(JAVAMIX)})" in text
    assert len(text) < 600 and "storm-1.jar" not in text, text
    with pytest.raises(CompatError, match=r"the project's: lein's folder .*_build has none; "
                                          r"--java-jars: not given"):
        check_classes(plan, [], JAVAMIX, None)
    plan.config[jvm.CLASSPATH].append(str(jar(tmp_path / "more.jar", "javamix.SentenceSpout")))
    check_classes(plan, [mine], JAVAMIX, None)  # every class is there
    classes = tmp_path / "classes" / "javamix"  # a folder of classes counts as well
    classes.mkdir(parents=True)
    (classes / "SentenceSpout.class").write_bytes(b"")
    plan.config[jvm.CLASSPATH] = [str(p) for p in (*storm, mine, tmp_path / "classes")]
    check_classes(plan, [mine], JAVAMIX, None)
    plan.config[jvm.CLASSPATH] = [str(p) for p in (mine, tmp_path / "unreadable.jar")]
    check_classes(plan, [mine], JAVAMIX, None)  # what cannot be read, the JVM decides
