"""heronpy topologies (Topology subclasses, TopologyBuilders, scripts) into the plan."""

from __future__ import annotations

import base64
import pickle
import textwrap

import pytest
from heronpy_kit import HERE

from heronbridge.compat import CompatError
from heronbridge.compat.heronpy import HeronpyError
from heronbridge.compat.heronpy.loader import (
    CUSTOM_GROUPING,
    HOST_BOLT,
    HOST_SPOUT,
    imports_heronpy,
    load_file,
)
from heronbridge.runtime.plan.logical import CUSTOM, Grouping
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.shims.heronpy import keys
from heronbridge.shims.heronpy.config import auto_type, component_view


def write(tmp_path, text, name="topo.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


TOPOLOGY = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(HERE)!r})
    from heronpy.api.stream import Grouping, Stream
    from heronpy.api.topology import Topology
    from hp_components import JudgeBolt, ModGrouping, NumberSpout, RecordBolt

    class Kinds(Topology):
        config = {{"topology.reliability.mode": "ATLEAST_ONCE", "topology.stmgrs": 2,
                  "my.flag": True, "my.ratio": 0.5, "my.list": [1, (2, 3)]}}
        numbers = NumberSpout.spec(par=2, optional_outputs=[Stream(["x"], name="extra")])
        judge = JudgeBolt.spec(par=3, inputs={{numbers: Grouping.fields("key")}},
                               config={{"topology.tick.tuple.freq.secs": 2, "mine": "yes"}})
        shuffled = RecordBolt.spec(inputs=[judge])
        everyone = RecordBolt.spec(par=2, inputs={{judge: Grouping.ALL}})
        lowest = RecordBolt.spec(par=2, inputs={{judge: Grouping.GLOBAL}})
        anyone = RecordBolt.spec(inputs={{numbers["extra"]: Grouping.NONE}})
        custom = RecordBolt.spec(par=2, inputs={{judge: Grouping.custom(ModGrouping())}})
""")


def test_a_topology_class_becomes_a_plan_with_hosts_streams_groupings_and_config(tmp_path):
    plan = load_file(write(tmp_path, TOPOLOGY))
    assert plan.name == "Kinds"  # heronpy names a class topology after the class
    numbers, judge = plan.components["numbers"], plan.components["judge"]
    assert (numbers.class_path, judge.class_path) == (HOST_SPOUT, HOST_BOLT)
    assert numbers.config[keys.CLASS] == "hp_components.NumberSpout"
    assert numbers.parallelism == 2 and judge.parallelism == 3
    assert {s: o.fields for s, o in numbers.outputs.items()} == \
        {"default": ("n", "key"), "extra": ("x",)}
    groupings = {name: [(i.component, i.stream, i.grouping) for i in spec.inputs]
                 for name, spec in plan.components.items()}
    assert groupings["judge"] == [("numbers", "default", Grouping.by_fields("key"))]
    assert groupings["shuffled"] == [("judge", "default", Grouping.SHUFFLE)]
    assert groupings["everyone"] == [("judge", "default", Grouping.ALL)]
    assert groupings["lowest"] == [("judge", "default", Grouping.GLOBAL)]
    assert groupings["anyone"] == [("numbers", "extra", Grouping.NONE)]
    assert groupings["custom"][0][2].kind == CUSTOM
    assert groupings["custom"][0][2].custom == CUSTOM_GROUPING
    # The custom grouping object travels on its source, under the subscriber and stream.
    blob = judge.config[keys.CUSTOM_GROUPINGS]["custom"]["default"]
    assert type(pickle.loads(base64.b64decode(blob))).__name__ == "ModGrouping"
    # Config: heronpy's strings auto-typed back; other values pickled, then unpickled.
    assert plan.config["topology.stmgrs"] == 2 and plan.config["my.flag"] is True
    assert plan.config["my.ratio"] == 0.5 and plan.config["topology.max.spout.pending"] == 100
    assert plan.config["heronbridge.serializer"] == "msgpack"
    assert component_view(plan.component_config("judge"))["my.list"] == [1, (2, 3)]
    assert judge.config["topology.tick.tuple.freq.secs"] == 2 and judge.config["mine"] == "yes"
    assert plan.python_path == [str(tmp_path)]


def test_task_ids_follow_storm_with_one_acker_per_stream_manager_when_acking(tmp_path):
    plan = load_file(write(tmp_path, TOPOLOGY))
    assert plan.reserved == {"__acker": 2}
    tasks = TaskLayout.of(plan).component_tasks
    assert tasks == {"__acker": (1, 2), "anyone": (3,), "custom": (4, 5), "everyone": (6, 7),
                     "judge": (8, 9, 10), "lowest": (11, 12), "numbers": (13, 14),
                     "shuffled": (15,)}
    unacked = load_file(write(tmp_path, TOPOLOGY), options={
        "topology.reliability.mode": "ATMOST_ONCE"})
    assert unacked.reserved == {}


def test_options_go_over_the_topology_config(tmp_path):
    plan = load_file(write(tmp_path, TOPOLOGY), options={"topology.stmgrs": 3, "my.flag": 7,
                                                           "heronbridge.serializer": "msgpack"})
    assert plan.config["my.flag"] == 7 and plan.reserved == {"__acker": 3}
    assert plan.config["heronbridge.serializer"] == "msgpack"


BUILDER = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(HERE)!r})
    from heronpy.api.stream import Grouping
    from heronpy.api.topology import TopologyBuilder
    from hp_components import NumberSpout, RecordBolt

    def build(name):
        builder = TopologyBuilder(name)
        numbers = builder.add_spout("numbers", NumberSpout, 1)
        builder.add_bolt("record", RecordBolt, 2, inputs={{numbers: Grouping.SHUFFLE}},
                         config={{"topology.tick.tuple.freq.secs": 1}})
        builder.set_config({{"test.count": 5}})
        return builder
""")


def test_a_module_level_topology_builder(tmp_path):
    path = write(tmp_path, BUILDER + "\nbuilder = build('built')\n")
    plan = load_file(path)
    assert plan.name == "built" and sorted(plan.components) == ["numbers", "record"]
    assert plan.config["test.count"] == 5 and plan.reserved == {}


def test_a_script_that_builds_and_submits_under_main_gets_the_name_as_argv(tmp_path):
    path = write(tmp_path, BUILDER + textwrap.dedent("""
        class Local(NumberSpout):
            pass

        if __name__ == "__main__":
            b = build(sys.argv[1])
            b.add_spout("local", Local, 1)
            b.build_and_submit()
    """))
    plan = load_file(path, "chosen")
    assert plan.name == "chosen"
    # A class the script defines is imported by its tasks from the file, not __main__.
    assert plan.components["local"].config[keys.CLASS] == "topo.Local"
    assert load_file(path).name == "topo"  # no -n: the file's stem


def test_several_topologies_need_a_name(tmp_path):
    path = write(tmp_path, BUILDER + "\na = build('a')\nb = build('b')\n")
    with pytest.raises(HeronpyError, match=r"expected one topology \(pick one with -n NAME\), it "
                                           r"defines \['a', 'b'\]"):
        load_file(path)
    assert load_file(path, "b").name == "b"
    with pytest.raises(HeronpyError, match=r"expected a topology named 'c', it defines"):
        load_file(path, "c")


@pytest.mark.parametrize(("text", "expected"), [
    ("import heronpy\nif __name__ == '__main__':\n    raise SystemExit(3)\n",
     r"run as a script \(topology name 'topo'\), it exited with 3"),
    ("import heronpy\nraise SystemExit(4)\n", r"failed to import: SystemExit: 4"),
    ("import heronpy.api.topology\n", r"expected a heronpy Topology subclass or "
                                      r"TopologyBuilder .* found none"),
    ("from heronpy.api.topology import Topology\nimport no_such_module\n",
     r"failed to import: ModuleNotFoundError"),
])
def test_files_without_a_topology_are_refused_clearly(tmp_path, text, expected):
    with pytest.raises(HeronpyError, match=expected):
        load_file(write(tmp_path, text))


def test_a_component_class_that_does_not_import_is_named(tmp_path):
    text = TOPOLOGY.replace("class Kinds", textwrap.dedent("""
        class Moved(NumberSpout):
            __module__ = "gone"

        class Kinds""")).replace("NumberSpout.spec(par=2", "Moved.spec(par=2")
    with pytest.raises(HeronpyError, match=r"component 'numbers': its class "
                                           r"'gone.Moved' cannot be imported"):
        load_file(write(tmp_path, text))


def test_java_components_and_bad_parallelism_are_refused(tmp_path):
    from heronpy.proto import topology_pb2

    from heronbridge.compat.heronpy.loader import plan_from_proto

    proto = topology_pb2.Topology(id="j-1", name="java", state=1)
    spout = proto.spouts.add()
    spout.comp.name, spout.comp.spec = "s", 1
    spout.comp.class_name = "org.example.Spout"
    spout.comp.config.SetInParent()
    with pytest.raises(HeronpyError, match=r"topology 'java', component 's': expected a "
                                           r"Python class .* received component object spec 1"):
        plan_from_proto(proto, {}, [])
    spout.comp.spec = 3
    kv = spout.comp.config.kvs.add(key="topology.component.parallelism", value="0", type=1)
    with pytest.raises(HeronpyError, match=r"parallelism expects an integer >= 1, received 0"):
        plan_from_proto(proto, {}, [])
    kv.value = "1"
    out = spout.outputs.add()
    out.stream.id, out.stream.component_name = "default", "s"
    out.schema.keys.add(key="x", type=1)
    bolt = proto.bolts.add()
    bolt.comp.name, bolt.comp.spec, bolt.comp.class_name = "b", 3, "m.B"
    bolt.comp.config.SetInParent()
    inp = bolt.inputs.add(gtype=6)
    inp.stream.id, inp.stream.component_name = "default", "s"
    with pytest.raises(HeronpyError, match=r"component 'b': input s:default has grouping "
                                           r"type 6"):
        plan_from_proto(proto, {}, [])
    inp.gtype = 1
    assert sorted(plan_from_proto(proto, {}, []).components) == ["b", "s"]
    assert issubclass(HeronpyError, CompatError)


@pytest.mark.parametrize(("text", "value"), [
    ("30", 30), ("0.5", 0.5), ("true", True), ("False", False), ("ATLEAST_ONCE", "ATLEAST_ONCE"),
    ("1e3", 1000.0), ("", ""),
])
def test_config_strings_are_typed_back_as_heron_does(text, value):
    assert auto_type(text) == value and type(auto_type(text)) is type(value)


def test_a_file_imports_heronpy_when_it_says_so(tmp_path):
    assert imports_heronpy(write(tmp_path, "from heronpy.api.topology import Topology\n"))
    assert imports_heronpy(write(tmp_path, "import heronpy\n"))
    assert imports_heronpy(write(tmp_path, "from heronbridge.shims.heronpy.extras import "
                                           "ReliableSpout\n"))
    assert not imports_heronpy(write(tmp_path, "# import heronpy\nimport heronpyx\n"))
    assert not imports_heronpy(write(tmp_path, "from .heronpy import x\n"))
