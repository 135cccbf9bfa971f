# ruff: noqa: E501  (expected outputs hold TODO markers, one line each)
"""Before/after cases for the codemod: each is a small tree of modules, the tree the
codemod must make of it, and the rules expected to leave TODO markers.

The meta-tests run every case (output compiles, a second run changes nothing, comments
beside rewritten imports survive); test_rules checks each against its expected tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from textwrap import dedent


@dataclass(frozen=True)
class Case:
    name: str
    before: dict[str, str]
    after: dict[str, str]
    todos: tuple[str, ...] = ()  # rule ids of the markers, in report order
    rules: tuple[str, ...] = ()  # run only these (default: all)
    extra: dict[str, str] = field(default_factory=dict)  # unchanged files of the tree


def _d(text: str) -> str:
    return dedent(text).lstrip("\n")


CASES: list[Case] = []


def case(name: str, before: dict[str, str], after: dict[str, str], todos: tuple = (),
         rules: tuple = (), extra: dict | None = None) -> None:
    CASES.append(Case(name, {k: _d(v) for k, v in before.items()},
                      {k: _d(v) for k, v in after.items()}, todos, rules,
                      {k: _d(v) for k, v in (extra or {}).items()}))


# -- HB009 imports, and name resolution ------------------------------------------------

case("imports-from-with-comments", {"bolt.py": '''
    """A bolt."""

    # streamparse's classes
    from streamparse import Bolt, Stream  # the API
    import os

    class Upper(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False
        outputs = [Stream(["word"], "words")]

        def process(self, tup):
            self.emit([os.sep])
    '''}, {"bolt.py": '''
    """A bolt."""

    # streamparse's classes
    from heronpy.api.bolt.bolt import Bolt
    from heronpy.api.stream import Stream  # the API
    import os

    class Upper(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False
        outputs = [Stream(["word"], "words")]

        def process(self, tup):
            self.emit([os.sep])
    '''})

case("import-module-alias", {"bolt.py": '''
    import streamparse as sp  # aliased


    class Upper(sp.Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def process(self, tup):
            self.emit([tup.values[0].upper()])
    '''}, {"bolt.py": '''
    from heronpy.api.bolt.bolt import Bolt  # aliased


    class Upper(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def process(self, tup):
            self.emit([tup.values[0].upper()])
    '''})

case("import-submodule-and-alias", {"bolt.py": '''
    from streamparse.bolt import Bolt as B
    from pystorm.spout import Spout


    class Upper(B):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def process(self, tup):
            self.emit([1])


    class Numbers(Spout):
        def next_tuple(self):
            self.emit([1], tup_id=1)
    '''}, {"bolt.py": '''
    from heronpy.api.bolt.bolt import Bolt as B
    from heronpy.api.spout.spout import Spout


    class Upper(B):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def process(self, tup):
            self.emit([1])


    class Numbers(Spout):
        def next_tuple(self):
            self.emit([1], tup_id=1)
    '''})

# A(B), B(C), C(Bolt) across three modules, through a package re-export: A is a bolt.
case("bases-across-three-modules", {
    "pkg/__init__.py": "from .c import C\n",
    "pkg/c.py": '''
        from streamparse import Bolt


        class C(Bolt):
            auto_fail = False
        ''',
    "pkg/b.py": '''
        from pkg import C


        class B(C):
            auto_anchor = False
        ''',
    "a.py": '''
        from pkg.b import B as Base


        class A(Base):
            def process(self, tup):
                self.emit([1])
        ''',
}, {
    "pkg/c.py": '''
        from heronpy.api.bolt.bolt import Bolt


        class C(Bolt):
            auto_fail = False
        ''',
    "a.py": '''
        from pkg.b import B as Base


        class A(Base):
            def process(self, tup):
                self.emit([1])
                self.ack(tup)
        ''',
}, extra={"pkg/__init__.py": "from .c import C\n", "pkg/b.py": '''
        from pkg import C


        class B(C):
            auto_anchor = False
        '''})

# Spelled like streamparse, but not it: left alone.
case("same-name-other-library", {"bolt.py": '''
    from mylib import Bolt


    class Upper(Bolt):
        def initialize(self, conf, ctx):
            self.n = 0

        def process(self, tup):
            self.emit([tup.values.word])
    '''}, {})

# -- HB001 storm.py --------------------------------------------------------------------

case("storm-py-basic-bolt", {"split.py": '''
    import storm


    class SplitBolt(storm.BasicBolt):
        def initialize(self, conf, context):
            self.sep = conf.get("sep", " ")

        def process(self, tup):
            for word in tup.values[0].split(self.sep):
                storm.emit([word])
            storm.logInfo("split")


    class Numbers(storm.Spout):
        def nextTuple(self):
            storm.emit([1], id=1)


    if __name__ == "__main__":
        SplitBolt().run()
    '''}, {"split.py": '''
    from heronpy.api.bolt.bolt import Bolt
    from heronpy.api.spout.spout import Spout


    class SplitBolt(Bolt):
        def initialize(self, config, context):
            self.sep = config.get("sep", " ")

        def process(self, tup):
            try:
                for word in tup.values[0].split(self.sep):
                    self.emit([word], anchors=[tup])
                self.log("split", "info")
            except Exception:
                self.logger.exception("process failed")
                self.fail(tup)
                return
            self.ack(tup)


    class Numbers(Spout):
        def next_tuple(self):
            self.emit([1], tup_id=1)
    '''})

# -- HB002 initialize ------------------------------------------------------------------

case("initialize-renames-and-attributes", {"bolt.py": '''
    from streamparse import Bolt


    class Tagger(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, storm_conf, ctx):
            """Set up."""
            self.prefix = storm_conf.get("prefix", "")
            self.name = f"{self.component_name}-{self.task_id}"

        def process(self, tup):
            conf = "not the parameter"
            self.emit([self.prefix + conf])
    '''}, {"bolt.py": '''
    from heronpy.api.bolt.bolt import Bolt


    class Tagger(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, config, context):
            """Set up."""
            self.task_id = context.get_task_id()
            self.component_name = context.get_component_id()
            self.prefix = config.get("prefix", "")
            self.name = f"{self.component_name}-{self.task_id}"

        def process(self, tup):
            conf = "not the parameter"
            self.emit([self.prefix + conf])
    '''})

case("initialize-added-when-missing", {"spout.py": '''
    from streamparse import Spout


    class Numbers(Spout):
        outputs = ["n"]

        def next_tuple(self):
            self.emit([self.task_id])
    '''}, {"spout.py": '''
    from heronpy.api.spout.spout import Spout


    class Numbers(Spout):
        outputs = ["n"]

        def initialize(self, config, context):
            self.task_id = context.get_task_id()

        def next_tuple(self):
            self.emit([self.task_id])
    '''})

case("initialize-local-named-config", {"bolt.py": '''
    import configparser

    from streamparse import Bolt


    class Reader(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, stormconf, context):
            config = configparser.ConfigParser()
            config.read(stormconf.get("reader.ini", "reader.ini"))
            self.section = dict(config["main"]) if config.has_section("main") else {}
            self.names = [key for key in config.defaults()]
            self.topic = stormconf["topic"]

        def process(self, tup):
            config = tup.values[0]
            self.emit([config])
    '''}, {"bolt.py": '''
    import configparser

    from heronpy.api.bolt.bolt import Bolt


    class Reader(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, config, context):
            local_config = configparser.ConfigParser()
            local_config.read(config.get("reader.ini", "reader.ini"))
            self.section = dict(local_config["main"]) if local_config.has_section("main") else {}
            self.names = [key for key in local_config.defaults()]
            self.topic = config["topic"]

        def process(self, tup):
            config = tup.values[0]
            self.emit([config])
    '''})

case("initialize-reads-an-outer-config", {"bolt.py": '''
    from streamparse import Bolt

    config = {"prefix": ">"}


    class Prefixer(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, conf, ctx):
            self.prefix = config["prefix"] + conf.get("suffix", "")

        def process(self, tup):
            self.emit([self.prefix + tup.values[0]])
    '''}, {"bolt.py": '''
    from heronpy.api.bolt.bolt import Bolt
    from heronbridge.shims.heronpy.migrated import unported

    config = {"prefix": ">"}


    @unported("TODO(heronbridge:HB002): initialize's parameter 'conf' must be named 'config', and this method reads a 'config' from outside it, which the parameter would hide")
    class Prefixer(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        # TODO(heronbridge:HB002): initialize's parameter 'conf' must be named 'config', and this method reads a 'config' from outside it, which the parameter would hide
        # See heronbridge's docs/reference/codemod.md#hb002-initialize for what to do by hand.
        def initialize(self, conf, context):
            self.prefix = config["prefix"] + conf.get("suffix", "")

        def process(self, tup):
            self.emit([self.prefix + tup.values[0]])
    '''}, todos=("HB002",))

case("initialize-attributes-and-keywords-named-config", {"bolt.py": '''
    from streamparse import Bolt


    class Tagger(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, conf, ctx):
            self.config = dict(conf)
            self.tag = ctx["componentid"] + str(len(self.context))
            self.options = dict(config=conf.get("mode"))

        def process(self, tup):
            self.emit([self.tag])
    '''}, {"bolt.py": '''
    from heronpy.api.bolt.bolt import Bolt
    from heronbridge.shims.heronpy.migrated import storm_context


    class Tagger(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, config, context):
            self.context = storm_context(context)
            self.config = dict(config)
            self.tag = self.context["componentid"] + str(len(self.context))
            self.options = dict(config=config.get("mode"))

        def process(self, tup):
            self.emit([self.tag])
    '''})

# -- HB003 auto-ack --------------------------------------------------------------------

case("auto-ack-anchor-fail", {"bolt.py": '''
    from streamparse import Bolt


    class Parse(Bolt):
        def process(self, tup):
            """Parse one line."""
            line = tup.values[0]
            if not line:
                return  # nothing to do
            self.emit([line.strip()])
            self.emit([line], stream="raw", anchors=[])
            self.helper(line)

        def helper(self, line):
            self.emit([line])
    '''}, {"bolt.py": '''
    from heronpy.api.bolt.bolt import Bolt


    class Parse(Bolt):
        def process(self, tup):
            """Parse one line."""
            try:
                line = tup.values[0]
                if not line:
                    self.ack(tup)
                    return  # nothing to do
                self.emit([line.strip()], anchors=[tup])
                self.emit([line], stream="raw", anchors=[])
                self.helper(line)
            except Exception:
                self.fail(tup)
                raise
            self.ack(tup)

        def helper(self, line):
            # TODO(heronbridge:HB003): pystorm anchored emits made while process() runs to its tuple (auto_anchor); if this runs from process(), pass anchors=[tup]
            # See heronbridge's docs/reference/codemod.md#hb003-auto-ack for what to do by hand.
            self.emit([line])
    '''}, todos=("HB003",))

# -- HB004 tuple fields, HB007 specs, HB008 config: a topology across modules ----------

case("topology-fields-specs-config", {
    "src/spouts.py": '''
        from streamparse import Spout


        class Words(Spout):
            outputs = ["word", "n"]

            def next_tuple(self):
                self.emit(["a", 1], tup_id=1)
        ''',
    "src/bolts.py": '''
        from streamparse import Bolt


        class Count(Bolt):
            auto_ack = False
            auto_anchor = False
            auto_fail = False
            outputs = ["word", "count"]
            par = 3
            config = {"topology.tick.tuple.freq.secs": 2}

            def process(self, tup):
                self.emit([tup.values.word, tup.values.n, tup.values._asdict()])
        ''',
    "topologies/count.py": '''
        from streamparse import Grouping, Topology

        from bolts import Count
        from spouts import Words


        class CountTopology(Topology):
            config = {
                "topology.workers": 2,
                "topology.acker.executors": 1,
                "pystorm.log.level": "debug",
                "topology.max.spout.pending": 100,
            }
            words = Words.spec()
            count = Count.spec(inputs=words)
            total = Count.spec(inputs={count: Grouping.GLOBAL}, par=1)
        ''',
}, {
    "src/spouts.py": '''
        from heronpy.api.spout.spout import Spout


        class Words(Spout):
            outputs = ["word", "n"]

            def next_tuple(self):
                self.emit(["a", 1], tup_id=1)
        ''',
    "src/bolts.py": '''
        from heronpy.api.bolt.bolt import Bolt


        class Count(Bolt):
            auto_ack = False
            auto_anchor = False
            auto_fail = False
            outputs = ["word", "count"]
            par = 3
            config = {"topology.tick.tuple.freq.secs": 2}

            def process(self, tup):
                # TODO(heronbridge:HB004): field 'n' is not at one place in every stream this bolt reads ([['word', 'n'], ['word', 'count']]); index tup.values by position
                # TODO(heronbridge:HB004): heronpy's tuple values are a list: .values._asdict has no equivalent
                # See heronbridge's docs/reference/codemod.md#hb004-tuple-fields for what to do by hand.
                self.emit([tup.values[0], tup.values.n, tup.values._asdict()])
        ''',
    "topologies/count.py": '''
        from heronpy.api.stream import Grouping
        from heronpy.api.topology import Topology

        from bolts import Count
        from spouts import Words


        class CountTopology(Topology):
            config = {
                "topology.stmgrs": 2,
                "topology.max.spout.pending": 100,
                "topology.reliability.mode": "ATLEAST_ONCE",
            }
            words = Words.spec()
            count = Count.spec(inputs=[words], par=3, config={"topology.tick.tuple.freq.secs": 2})
            total = Count.spec(inputs={count: Grouping.LOWEST}, par=1, config={"topology.tick.tuple.freq.secs": 2})
        ''',
}, todos=("HB004", "HB004"))

# -- HB005 component API, HB006 groupings ----------------------------------------------

case("direct-and-unsupported", {"router.py": '''
    from streamparse import Bolt, Grouping, Stream, Topology


    class Router(Bolt):
        outputs = [Stream(["n"], "routed", direct=True)]

        def process(self, tup):
            tasks = self.emit([1], stream=None, need_task_ids=True)
            self.emit([2], direct_task=tasks[0])
            self.raise_exception(ValueError("x"), tup)


    class Direct(Topology):
        config = {"topology.acker.executors": 0}
        router = Router.spec(inputs=[], par=1)
        sink = Router.spec(inputs={router["routed"]: Grouping.DIRECT})
    '''}, {"router.py": '''
    from heronpy.api.bolt.bolt import Bolt
    from heronpy.api.stream import Grouping, Stream
    from heronpy.api.topology import Topology
    from heronbridge.shims.heronpy.migrated import unported


    @unported("TODO(heronbridge:HB006): heronpy has no direct streams: declared here as a plain stream, and topologies using this component refuse to run until its direct emits are routed by a key (a fields grouping)")
    class Router(Bolt):
        # TODO(heronbridge:HB006): heronpy has no direct streams: declared here as a plain stream, and topologies using this component refuse to run until its direct emits are routed by a key (a fields grouping)
        # See heronbridge's docs/reference/codemod.md#hb006-groupings for what to do by hand.
        outputs = [Stream(["n"], "routed")]

        def process(self, tup):
            try:
                # TODO(heronbridge:HB005): heronpy's emit returns task ids only for direct and custom groupings (a bolt's emit returns None)
                # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
                tasks = self.emit([1], need_task_ids=True, anchors=[tup])
                # TODO(heronbridge:HB005): heronpy does not route direct emits (direct grouping is not supported); route with a fields grouping on a task key
                # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
                self.emit([2], direct_task=tasks[0], anchors=[tup])
                # TODO(heronbridge:HB005): self.raise_exception: heronpy has no raise_exception; log the error and raise
                # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
                self.raise_exception(ValueError("x"), tup)
            except Exception:
                self.fail(tup)
                raise
            self.ack(tup)


    @unported("TODO(heronbridge:HB006): heronpy has no direct grouping: declared here as SHUFFLE, and this topology refuses to run until it groups by a key the emitter chooses (Grouping.fields)")
    class Direct(Topology):
        config = {}
        router = Router.spec(inputs=[], par=1)
        # TODO(heronbridge:HB006): heronpy has no direct grouping: declared here as SHUFFLE, and this topology refuses to run until it groups by a key the emitter chooses (Grouping.fields)
        # See heronbridge's docs/reference/codemod.md#hb006-groupings for what to do by hand.
        sink = Router.spec(inputs={router["routed"]: Grouping.SHUFFLE})
    '''}, todos=("HB005", "HB005", "HB005", "HB006", "HB006"))
# -- pystorm's attributes (attributes.py): set, kept, marked ------------------------------

case("pystorm-attributes-set", {"components.py": '''
    import logging

    from streamparse import Bolt, Spout


    class Numbers(Spout):
        outputs = ["n"]

        def initialize(self, stormconf, context):
            self.where = (self.topology_name, self.component_name, self.task_id)

        def next_tuple(self):
            self.logger.info("pid %s debug %s", self.pid, self.debug)
            self.emit([self.task_id], tup_id=self.task_id)

        def describe(self):
            return self.storm_conf["topology.name"], self.context["componentid"]


    class Echo(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def process(self, tup):
            self.emit([self.describe(), self.pid])

        def describe(self):
            return [self.component_name, self.storm_conf.get("x"), self.debug]


    def log_of(component):
        return logging.getLogger(component.topology_name)
    '''}, {"components.py": '''
    import logging

    from heronpy.api.bolt.bolt import Bolt
    from heronpy.api.spout.spout import Spout
    import os
    from heronbridge.shims.heronpy.migrated import storm_conf, storm_context


    class Numbers(Spout):
        outputs = ["n"]

        def initialize(self, config, context):
            self.pid = os.getpid()
            self.topology_name = context.get_topology_name()
            self.task_id = context.get_task_id()
            self.component_name = context.get_component_id()
            self.debug = config.get("topology.debug", False)
            self.storm_conf = storm_conf(context, spout=True)
            self.context = storm_context(context)
            self.where = (self.topology_name, self.component_name, self.task_id)

        def next_tuple(self):
            self.logger.info("pid %s debug %s", self.pid, self.debug)
            self.emit([self.task_id], tup_id=self.task_id)

        def describe(self):
            return self.storm_conf["topology.name"], self.context["componentid"]


    class Echo(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, config, context):
            self.pid = os.getpid()
            self.topology_name = context.get_topology_name()
            self.task_id = context.get_task_id()
            self.component_name = context.get_component_id()
            self.debug = config.get("topology.debug", False)
            self.storm_conf = storm_conf(context)
            self.context = storm_context(context)

        def process(self, tup):
            self.emit([self.describe(), self.pid])

        def describe(self):
            return [self.component_name, self.storm_conf.get("x"), self.debug]


    def log_of(component):
        return logging.getLogger(component.topology_name)
    '''})

case("pystorm-attributes-marked", {"components.py": '''
    from streamparse import BatchingBolt, Bolt, ReliableSpout, TicklessBatchingBolt


    class Raw(Bolt):
        exit_on_exception = False

        def initialize(self, conf, ctx):
            self.wire = self.serializer

        def process(self, tup):
            if self.auto_ack:
                self.log(len(self._current_tups))

        def _handle_run_exception(self, exc):
            self.helper(exc)

        def helper(self, exc):
            self.serializer.send_message({"command": "error", "msg": str(exc)})


    class Totals(BatchingBolt):
        def process_batch(self, key, tups):
            if self.auto_ack:
                self.emit([len(tups)])


    class Timed(TicklessBatchingBolt):
        def process_batch(self, key, tups):
            self.check()

        def check(self):
            return self.exc_info


    class Replays(ReliableSpout):
        def next_tuple(self):
            if len(self.unacked_tuples) < self.max_fails:
                self.emit([1], tup_id=1)
    '''}, {"components.py": '''
    from heronbridge.shims.heronpy.extras import BatchingBolt, ReliableSpout, TicklessBatchingBolt
    from heronpy.api.bolt.bolt import Bolt


    class Raw(Bolt):
        # TODO(heronbridge:HB005): exit_on_exception: heronpy always ends the task when a component raises: exit_on_exception has no effect
        # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
        exit_on_exception = False

        def initialize(self, config, context):
            # TODO(heronbridge:HB005): self.serializer: heronpy has no multilang serializer: pystorm's self.serializer has no equivalent
            # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
            self.wire = self.serializer

        def process(self, tup):
            try:
                # TODO(heronbridge:HB005): self.auto_ack: HB003 wrote pystorm's auto_ack out in process() from the class's flag: setting or reading it at run time changes nothing under heronpy
                # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
                if self.auto_ack:
                    # TODO(heronbridge:HB005): self._current_tups: pystorm's internal state has no heronpy equivalent
                    # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
                    self.log(len(self._current_tups))
            except Exception:
                self.fail(tup)
                raise
            self.ack(tup)

        # TODO(heronbridge:HB005): _handle_run_exception() overrides pystorm's: heronpy never calls _handle_run_exception: the task ends on an error
        # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
        def _handle_run_exception(self, exc):
            self.helper(exc)

        def helper(self, exc):
            # TODO(heronbridge:HB005): self.serializer: heronpy has no multilang serializer: pystorm's self.serializer has no equivalent
            # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
            self.serializer.send_message({"command": "error", "msg": str(exc)})


    class Totals(BatchingBolt):
        def process_batch(self, key, tups):
            if self.auto_ack:
                self.emit([len(tups)])


    class Timed(TicklessBatchingBolt):
        def process_batch(self, key, tups):
            self.check()

        def check(self):
            # TODO(heronbridge:HB005): self.exc_info: heronbridge's TicklessBatchingBolt runs batches in the task's thread: there is no batcher error to read
            # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
            return self.exc_info


    class Replays(ReliableSpout):
        def next_tuple(self):
            if len(self.unacked_tuples) < self.max_fails:
                self.emit([1], tup_id=1)
    '''}, todos=("HB005",) * 7)

case("initialize-context-parameter", {"bolt.py": '''
    from streamparse import Bolt


    class Sinks(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, conf, ctx):
            tasks = ctx["task->component"]
            self.sinks = sorted(int(t) for t, c in tasks.items() if c == conf["sink"])
            self.me = ctx.get("taskid")

        def process(self, tup):
            self.emit([self.sinks])
    '''}, {"bolt.py": '''
    from heronpy.api.bolt.bolt import Bolt
    from heronbridge.shims.heronpy.migrated import storm_context


    class Sinks(Bolt):
        auto_ack = False
        auto_anchor = False
        auto_fail = False

        def initialize(self, config, context):
            self.context = storm_context(context)
            tasks = self.context["task->component"]
            self.sinks = sorted(int(t) for t, c in tasks.items() if c == config["sink"])
            self.me = self.context.get("taskid")

        def process(self, tup):
            self.emit([self.sinks])
    '''})

case("init-forwarding-the-delegate", {"spouts.py": '''
    from streamparse import Spout


    class Topic(Spout):
        def __init__(self, *args, **kwargs):
            super(Topic, self).__init__(*args, **kwargs)
            self.topic = "a"

        def next_tuple(self):
            self.emit([self.topic])


    class Fixed(Spout):
        def __init__(self):
            super().__init__()
            self.topic = "b"

        def next_tuple(self):
            self.emit([self.topic])
    '''}, {"spouts.py": '''
    from heronpy.api.spout.spout import Spout


    class Topic(Spout):
        def __init__(self, *args, **kwargs):
            super(Topic, self).__init__(*args, **kwargs)
            self.topic = "a"

        def next_tuple(self):
            self.emit([self.topic])


    class Fixed(Spout):
        # TODO(heronbridge:HB005): heronpy constructs components as Component(delegate=...); move this set-up into initialize(), or take **kwargs and pass them to super().__init__
        # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
        def __init__(self):
            super().__init__()
            self.topic = "b"

        def next_tuple(self):
            self.emit([self.topic])
    '''}, todos=("HB005",))

# -- what heronpy rejects when a class is created: declared as it accepts, refusing to run --

case("shell-and-java-declared-refusing", {
    "src/spouts.py": '''
        from streamparse import Spout


        class Words(Spout):
            outputs = ["word"]

            def next_tuple(self):
                self.emit(["a"], tup_id=1)
        ''',
    "topologies/mixed.py": '''
        from streamparse import Grouping, JavaSpout, ShellBolt, Topology

        from spouts import Words


        class Mixed(Topology):
            words = Words.spec(par={"prod": 4, "dev": 1})
            pixels = JavaSpout.spec(full_class_name="a.B", args_list=[], outputs=["p"])
            split = ShellBolt.spec(command="python", script="split.py", inputs=[words],
                                   outputs=["part"], par=2)
            spread = ShellBolt.spec(command="node", script="s.js", outputs=["x"],
                                    inputs={split: Grouping.custom_object("a.G", [])})
        ''',
}, {
    "src/spouts.py": '''
        from heronpy.api.spout.spout import Spout


        class Words(Spout):
            outputs = ["word"]

            def next_tuple(self):
                self.emit(["a"], tup_id=1)
        ''',
    "topologies/mixed.py": '''
        from heronpy.api.stream import Grouping
        from heronbridge.shims.heronpy.migrated import unported, JavaSpout, ShellBolt
        from heronpy.api.topology import Topology

        from spouts import Words


        @unported('TODO(heronbridge:HB006): heronpy runs no Java custom groupings: Grouping.custom_object("a.G", []) is declared here as SHUFFLE, and this topology refuses to run until it uses an ICustomGrouping (Grouping.custom())', "TODO(heronbridge:HB007): heronpy runs Python components only: this JavaSpout is declared, and the topology refuses to run until it is ported to a Python Spout", "TODO(heronbridge:HB007): heronpy runs Python components only: this ShellBolt is declared, and the topology refuses to run until it is ported to a Python Bolt")
        class Mixed(Topology):
            config = {"topology.reliability.mode": "ATLEAST_ONCE"}
            # TODO(heronbridge:HB007): par given per environment ({"prod": 4, "dev": 1}): heronpy takes one number; this is the prod environment's; change it for another
            # See heronbridge's docs/reference/codemod.md#hb007-specs for what to do by hand.
            words = Words.spec(par=4)
            # TODO(heronbridge:HB007): heronpy runs Python components only: this JavaSpout is declared, and the topology refuses to run until it is ported to a Python Spout
            # See heronbridge's docs/reference/codemod.md#hb007-specs for what to do by hand.
            pixels = JavaSpout.spec(full_class_name="a.B", args_list=[], outputs=["p"])
            # TODO(heronbridge:HB007): heronpy runs Python components only: this ShellBolt is declared, and the topology refuses to run until it is ported to a Python Bolt
            # See heronbridge's docs/reference/codemod.md#hb007-specs for what to do by hand.
            split = ShellBolt.spec(command="python", script="split.py", inputs=[words],
                                   outputs=["part"], par=2)
            # TODO(heronbridge:HB006): heronpy runs no Java custom groupings: Grouping.custom_object("a.G", []) is declared here as SHUFFLE, and this topology refuses to run until it uses an ICustomGrouping (Grouping.custom())
            # See heronbridge's docs/reference/codemod.md#hb006-groupings for what to do by hand.
            # TODO(heronbridge:HB007): heronpy runs Python components only: this ShellBolt is declared, and the topology refuses to run until it is ported to a Python Bolt
            # See heronbridge's docs/reference/codemod.md#hb007-specs for what to do by hand.
            spread = ShellBolt.spec(command="node", script="s.js", outputs=["x"],
                                    inputs={split: Grouping.SHUFFLE})
        ''',
}, todos=("HB006", "HB007", "HB007", "HB007", "HB007"), extra={})

# A module with a direct-stream bolt beside a plain one: the module imports, the
# topology using only the plain bolt is untouched, the other refuses to run. A whole
# project (config.json): test_migrated_runs loads each of its topologies, migrated.
PROJECT_CONFIG = '''
    {"serializer": "json", "topology_specs": "topologies/", "virtualenv_specs": "virtualenvs/",
     "envs": {"prod": {"options": {}}}}
    '''
case("direct-stream-beside-a-plain-bolt", {
    "src/bolts.py": '''
        from streamparse import Bolt, Stream


        class Plain(Bolt):
            outputs = ["n"]

            def process(self, tup):
                self.emit([tup.values.n])


        class Router(Bolt):
            outputs = [Stream(["n"], "routed", True)]

            def process(self, tup):
                self.emit([tup.values.n], stream="routed", direct_task=2)
        ''',
    "src/spouts.py": '''
        from streamparse import Spout


        class Numbers(Spout):
            outputs = ["n"]

            def next_tuple(self):
                self.emit([1], tup_id=1)
        ''',
    "topologies/plain.py": '''
        from streamparse import Grouping, Topology

        from bolts import Plain
        from spouts import Numbers


        class PlainTopology(Topology):
            numbers = Numbers.spec()
            plain = Plain.spec(inputs={numbers: Grouping.fields("n")})
        ''',
    "topologies/routed.py": '''
        from streamparse import Grouping, Topology

        from bolts import Plain, Router
        from spouts import Numbers


        class RoutedTopology(Topology):
            numbers = Numbers.spec()
            router = Router.spec(inputs=[numbers])
            plain = Plain.spec(inputs={router["routed"]: Grouping.DIRECT})
        ''',
}, {
    "src/bolts.py": '''
        from heronpy.api.bolt.bolt import Bolt
        from heronpy.api.stream import Stream
        from heronbridge.shims.heronpy.migrated import unported


        class Plain(Bolt):
            outputs = ["n"]

            def process(self, tup):
                try:
                    self.emit([tup.values[0]], anchors=[tup])
                except Exception:
                    self.fail(tup)
                    raise
                self.ack(tup)


        @unported("TODO(heronbridge:HB006): heronpy has no direct streams: declared here as a plain stream, and topologies using this component refuse to run until its direct emits are routed by a key (a fields grouping)")
        class Router(Bolt):
            # TODO(heronbridge:HB006): heronpy has no direct streams: declared here as a plain stream, and topologies using this component refuse to run until its direct emits are routed by a key (a fields grouping)
            # See heronbridge's docs/reference/codemod.md#hb006-groupings for what to do by hand.
            outputs = [Stream(["n"], "routed")]

            def process(self, tup):
                try:
                    # TODO(heronbridge:HB005): heronpy does not route direct emits (direct grouping is not supported); route with a fields grouping on a task key
                    # See heronbridge's docs/reference/codemod.md#hb005-component-api for what to do by hand.
                    self.emit([tup.values[0]], stream="routed", direct_task=2, anchors=[tup])
                except Exception:
                    self.fail(tup)
                    raise
                self.ack(tup)
        ''',
    "src/spouts.py": '''
        from heronpy.api.spout.spout import Spout


        class Numbers(Spout):
            outputs = ["n"]

            def next_tuple(self):
                self.emit([1], tup_id=1)
        ''',
    "topologies/plain.py": '''
        from heronpy.api.stream import Grouping
        from heronpy.api.topology import Topology

        from bolts import Plain
        from spouts import Numbers


        class PlainTopology(Topology):
            config = {"topology.reliability.mode": "ATLEAST_ONCE"}
            numbers = Numbers.spec()
            plain = Plain.spec(inputs={numbers: Grouping.fields("n")})
        ''',
    "topologies/routed.py": '''
        from heronpy.api.stream import Grouping
        from heronpy.api.topology import Topology

        from bolts import Plain, Router
        from spouts import Numbers
        from heronbridge.shims.heronpy.migrated import unported


        @unported("TODO(heronbridge:HB006): heronpy has no direct grouping: declared here as SHUFFLE, and this topology refuses to run until it groups by a key the emitter chooses (Grouping.fields)")
        class RoutedTopology(Topology):
            config = {"topology.reliability.mode": "ATLEAST_ONCE"}
            numbers = Numbers.spec()
            router = Router.spec(inputs=[numbers])
            # TODO(heronbridge:HB006): heronpy has no direct grouping: declared here as SHUFFLE, and this topology refuses to run until it groups by a key the emitter chooses (Grouping.fields)
            # See heronbridge's docs/reference/codemod.md#hb006-groupings for what to do by hand.
            plain = Plain.spec(inputs={router["routed"]: Grouping.SHUFFLE})
        ''',
}, todos=("HB005", "HB006", "HB006"), extra={"config.json": PROJECT_CONFIG})

# HB007: a spout given inputs, and src. imports in a topology: marked, left as written.
case("spout-inputs-and-src-imports", {
    "topologies/t.py": '''
        from streamparse import Topology

        from src.spouts import Words
        import src.bolts


        class T(Topology):
            config = {"topology.workers": 1}
            words = Words.spec(inputs=config)
            count = src.bolts.Count.spec(inputs=words)
        ''',
    "src/spouts.py": '''
        from streamparse import Spout


        class Words(Spout):
            outputs = ["word"]
        ''',
    "src/bolts.py": '''
        from streamparse import Bolt


        class Count(Bolt):
            auto_ack = False
            auto_anchor = False
            auto_fail = False
        ''',
}, {
    "topologies/t.py": '''
        from heronpy.api.topology import Topology

        # TODO(heronbridge:HB007): imports src.spouts: a topology's components are found with src/ itself on the path (Storm's jar puts src/'s contents at its root), so import spouts
        # See heronbridge's docs/reference/codemod.md#hb007-specs for what to do by hand.
        from src.spouts import Words
        # TODO(heronbridge:HB007): imports src.bolts: a topology's components are found with src/ itself on the path (Storm's jar puts src/'s contents at its root), so import bolts
        # See heronbridge's docs/reference/codemod.md#hb007-specs for what to do by hand.
        import src.bolts


        class T(Topology):
            config = {"topology.stmgrs": 1, "topology.reliability.mode": "ATLEAST_ONCE"}
            # TODO(heronbridge:HB007): a spout has no inputs: streamparse's Spout.spec() takes none either (it raises TypeError); remove inputs=
            # See heronbridge's docs/reference/codemod.md#hb007-specs for what to do by hand.
            words = Words.spec(inputs=config)
            count = src.bolts.Count.spec(inputs=[words])
        ''',
    "src/spouts.py": '''
        from heronpy.api.spout.spout import Spout


        class Words(Spout):
            outputs = ["word"]
        ''',
    "src/bolts.py": '''
        from heronpy.api.bolt.bolt import Bolt


        class Count(Bolt):
            auto_ack = False
            auto_anchor = False
            auto_fail = False
        ''',
}, todos=("HB007", "HB007", "HB007"))
