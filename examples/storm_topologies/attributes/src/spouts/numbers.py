"""Emit the numbers 0 .. attributes.count-1, each with what pystorm told the spout about
itself, as read in initialize, in next_tuple and in a helper method; then stop."""

import logging
import os
import time

from streamparse import Spout

from output_files import int_option


class NumberSpout(Spout):
    outputs = ["n", "seen"]

    def initialize(self, stormconf, context):
        self.count = int_option(stormconf, "attributes.count", 40)
        self.next_n = 0
        self.at_initialize = [
            self.task_id, self.component_name, self.topology_name, self.debug,
            self.pid == os.getpid(), self.storm_conf["topology.name"],
            self.context["componentid"], isinstance(self.logger, logging.Logger),
        ]

    def next_tuple(self):
        if self.next_n >= self.count:
            time.sleep(0.01)
            return
        n = self.next_n
        at_next_tuple = [
            self.task_id, self.component_name, self.topology_name, self.debug,
            self.pid == os.getpid(), self.storm_conf["topology.name"],
            self.context["componentid"], isinstance(self.logger, logging.Logger),
        ]
        seen = {"initialize": self.at_initialize, "next_tuple": at_next_tuple,
                "helper": self.at_helper()}
        self.emit([n, seen], tup_id=n)
        self.next_n += 1

    def at_helper(self):
        own_tasks = sorted(int(task) for task, component
                           in self.context["task->component"].items()
                           if component == self.component_name)
        return [
            self.task_id, self.component_name, self.topology_name, self.debug,
            self.pid == os.getpid(), self.storm_conf.get("attributes.count"),
            self.context["taskid"], own_tasks,
        ]
