"""A Java task's command line: the JVM options Heron's resource keys give its component,
the classpath from the plan, the Python instance's arguments."""

from __future__ import annotations

import base64
import json

import pytest

from heronbridge.runtime.errors import ConfigError
from heronbridge.runtime.plan.builder import TopologyBuilder
from heronbridge.runtime.plan.logical import Grouping
from heronbridge.runtime.scheduler import jvm

JAVA = {jvm.COMPONENT: {"class": "org.apache.storm.testing.TestWordSpout", "args": []}}


def plan(**config):
    b = TopologyBuilder("jt", {jvm.CLASSPATH: ["/h.jar", "/s.jar"], jvm.JAVA: "/j/java",
                               **config})
    words = b.spout("words", "java:org.apache.storm.testing.TestWordSpout", outputs=["word"],
                    config=JAVA)
    b.bolt("count", "java:org.apache.storm.testing.TestWordCounter",
           {words: Grouping.by_fields("word")}, outputs=["word", "count"],
           config={jvm.COMPONENT: {"class": "org.apache.storm.testing.TestWordCounter"}})
    return b.build()


def heron_jvmopts(entries: dict[str, str]) -> str:
    """What Heron's Config.setComponentJvmOptions writes: base64 names and options."""
    return json.dumps({base64.b64encode(k.encode()).decode(): base64.b64encode(v.encode())
                       .decode() for k, v in entries.items()})


def test_the_command_is_the_host_main_with_the_instance_arguments():
    p = plan()
    argv = jvm.task_command(p, "words", ["--task", "3"], "/code")
    assert argv == ["/j/java", *jvm.DEFAULT_OPTIONS, "-cp", "/h.jar:/s.jar", jvm.MAIN,
                    "--task", "3", "--code-dir", "/code"]
    assert jvm.is_java(p, "words")


def test_ram_then_worker_childopts_then_the_components_own_options_last():
    p = plan(**{"topology.component.rammap": "words:268435456",
                jvm.WORKER_CHILDOPTS: "-Xss512k -Dall=1",
                jvm.COMPONENT_JVMOPTS: heron_jvmopts({"words": "-Xmx64m -Dwords=1"})})
    assert jvm.jvm_options(p, "words") == [*jvm.DEFAULT_OPTIONS, "-Xmx256m", "-Xss512k",
                                           "-Dall=1", "-Xmx64m", "-Dwords=1"]
    assert jvm.jvm_options(p, "count") == [*jvm.DEFAULT_OPTIONS, "-Xss512k", "-Dall=1"]
    mapped = plan(**{jvm.COMPONENT_JVMOPTS: {"count": ["-Xmx32m"]}})
    assert jvm.jvm_options(mapped, "count") == [*jvm.DEFAULT_OPTIONS, "-Xmx32m"]


@pytest.mark.parametrize(("key", "value", "said"), [
    (jvm.COMPONENT_JVMOPTS, "not json", "Heron's text"),
    (jvm.WORKER_CHILDOPTS, 5, "JVM options as a string or a list of strings"),
    (jvm.CLASSPATH, [], "the JVM task host's classpath"),
])
def test_bad_options_are_named(key, value, said):
    with pytest.raises(ConfigError, match=said) as raised:
        jvm.task_command(plan(**{key: value}), "words", [], "/code")
    assert "topology 'jt'" in str(raised.value)
