"""Two bolts in one module: `EchoBolt`, a plain bolt that reads what pystorm told it
about itself, and `RouterBolt`, which routes by a direct stream.

The `attributes` topology uses only EchoBolt; `routed` puts RouterBolt before it.
"""

import logging
import os

from streamparse import Bolt, Stream

from output_files import JsonLinesOutput

ECHO_COMPONENT = "echo"


class EchoBolt(Bolt):
    outputs = ["n", "seen"]

    def initialize(self, conf, ctx):
        self.output = JsonLinesOutput(self, conf)
        self.at_initialize = [
            self.task_id, self.component_name, self.topology_name, self.debug,
            self.pid == os.getpid(), self.storm_conf["topology.name"],
            self.context["componentid"], isinstance(self.logger, logging.Logger),
        ]

    def process(self, tup):
        n = tup.values.n
        at_process = [
            self.task_id, self.component_name, self.topology_name, self.debug,
            self.pid == os.getpid(), self.storm_conf["topology.name"],
            self.context["componentid"], isinstance(self.logger, logging.Logger),
        ]
        seen = {"upstream": tup.values.seen, "initialize": self.at_initialize,
                "process": at_process, "helper": self.at_helper()}
        self.output.write({"n": n, "seen": seen})
        self.emit([n, seen])

    def at_helper(self):
        sources = sorted(self.context["source->stream->fields"])
        return [
            self.task_id, self.component_name, self.topology_name, self.debug,
            self.pid == os.getpid(), self.storm_conf.get("attributes.count"),
            self.context["taskid"], sources,
        ]


class RouterBolt(Bolt):
    outputs = [Stream(fields=["n", "seen"], name="routed", direct=True)]

    def initialize(self, conf, ctx):
        self.echo_tasks = sorted(int(task) for task, component
                                 in self.context["task->component"].items()
                                 if component == ECHO_COMPONENT)

    def process(self, tup):
        n = tup.values.n
        task = self.echo_tasks[n % len(self.echo_tasks)]
        self.emit([n, tup.values.seen], stream="routed", direct_task=task)
