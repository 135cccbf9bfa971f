"""What migrated code calls besides heronpy (heronbridge.shims.heronpy.migrated): classes
marked @unported refuse to load, shell and Java components are declared with
streamparse's arguments, and pystorm's conf and context are rebuilt from heronpy's."""

from __future__ import annotations

import inspect
import logging
import textwrap
from types import SimpleNamespace

import pytest
import streamparse

from heronbridge.compat.heronpy.loader import load_file
from heronbridge.shims.heronpy import extras, migrated
from heronbridge.shims.heronpy.migrated import Unported, refuse_unported, unported

PLACEHOLDERS = ("ShellBolt", "ShellSpout", "JavaBolt", "JavaSpout")


@pytest.mark.parametrize("name", PLACEHOLDERS)
def test_shell_and_java_specs_take_streamparse_arguments_in_its_order(name):
    ours = inspect.signature(getattr(migrated, name).spec).parameters
    theirs = inspect.signature(getattr(streamparse, name).spec).parameters
    assert list(ours) == list(theirs)


def test_an_unported_mark_is_inherited_and_names_where_it_is_refused():
    @unported("TODO(heronbridge:HB006): one")
    class Base:
        pass

    @unported("TODO(heronbridge:HB006): two")
    class Child(Base):
        pass

    refuse_unported("topology 't'", int)  # an ordinary class passes
    with pytest.raises(Unported) as refused:
        refuse_unported("topology 't', component 'c'", Child)
    said = str(refused.value)
    assert said.startswith("topology 't', component 'c': expected what heronpy can run")
    assert "HB006): one; TODO(heronbridge:HB006): two" in said
    assert Base.heronbridge_unported == ("TODO(heronbridge:HB006): one",)


TOPOLOGY = textwrap.dedent('''
    from heronpy.api.bolt.bolt import Bolt
    from heronpy.api.spout.spout import Spout
    from heronpy.api.stream import Grouping, Stream
    from heronpy.api.topology import Topology
    from heronbridge.shims.heronpy.migrated import ShellBolt, unported


    class Numbers(Spout):
        outputs = ["n"]


    @unported("TODO(heronbridge:HB006): a direct stream")
    class Router(Bolt):
        outputs = [Stream(["n"], "routed")]


    class Echo(Bolt):
        outputs = ["n"]


    class Plain(Topology):
        numbers = Numbers.spec()
        echo = Echo.spec(inputs={numbers: Grouping.fields("n")})


    class UsesRouter(Topology):
        numbers = Numbers.spec()
        router = Router.spec(inputs=[numbers])


    @unported("TODO(heronbridge:HB007): a shell bolt")
    class Shell(Topology):
        numbers = Numbers.spec()
        split = ShellBolt.spec(command="python", script="split.py", inputs=[numbers],
                               outputs=["word"], par=2)
        echo = Echo.spec(inputs={split: Grouping.SHUFFLE})
''')


def test_a_module_with_unported_classes_loads_and_only_their_topologies_refuse(tmp_path):
    path = tmp_path / "topologies.py"
    path.write_text(TOPOLOGY)
    plan = load_file(path, "Plain")
    assert set(plan.components) == {"numbers", "echo"}
    with pytest.raises(Unported, match=r"topology 'UsesRouter', component 'router': .*"
                                       r"TODO\(heronbridge:HB006\): a direct stream"):
        load_file(path, "UsesRouter")
    with pytest.raises(Unported, match=r"topology 'Shell': .*HB007\): a shell bolt"):
        load_file(path, "Shell")


def test_pystorm_conf_and_context_from_any_heronpy_context():
    """Outside heronbridge's runtime, what heronpy's TopologyContext can tell."""
    context = SimpleNamespace(get_cluster_config=lambda: {"my.option": 3},
                              get_topology_name=lambda: "words",
                              get_component_id=lambda: "count", get_task_id=lambda: 7)
    assert migrated.storm_conf(context) == {"topology.debug": False, "my.option": 3,
                                            "topology.name": "words"}
    assert migrated.storm_context(context) == {"taskid": 7, "componentid": "count",
                                               "task->component": {"7": "count"}}


def test_a_reliable_spout_has_its_tuples_from_the_start():
    spout = extras.ReliableSpout(delegate=SimpleNamespace(logger=logging.getLogger("r"),
                                                          emit=lambda *a, **k: None))
    assert spout.unacked_tuples == {} and not spout.failed_tuples
    spout.emit(["a"], tup_id=1)
    assert list(spout.unacked_tuples) == [1]
    spout.unacked_tuples = {}
    spout.fail(1)  # unknown now: logged, not replayed
    assert spout.unacked_tuples == {} and spout.failed_tuples[1] == 0


def test_the_helpers_module_is_what_the_rules_import():
    from heronbridge.migrate.attributes import ATTRIBUTES
    from heronbridge.migrate.rule import HELPERS, UNPORTED

    assert HELPERS == migrated.__name__ and hasattr(migrated, UNPORTED)
    for attribute in ATTRIBUTES.values():
        for module, symbol in attribute.imports:
            if module == HELPERS:
                assert hasattr(migrated, symbol), symbol
