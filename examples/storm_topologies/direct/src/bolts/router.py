"""Route each number to a chosen task of ``sink`` and probe ``mirror``."""

from streamparse import Bolt, Stream

from output_files import JsonLinesOutput

SINK_COMPONENT = "sink"


class RouterBolt(Bolt):
    outputs = [
        Stream(fields=["n"], name="probe"),
        Stream(fields=["n"], name="routed", direct=True),
    ]

    def initialize(self, conf, ctx):
        task_to_component = self.context["task->component"]
        self.sink_tasks = sorted(
            int(task)
            for task, component in task_to_component.items()
            if component == SINK_COMPONENT
        )
        if not self.sink_tasks:
            msg = f"no tasks for component {SINK_COMPONENT!r}"
            raise ValueError(msg)
        self.logger.info("tasks of %s: %s", SINK_COMPONENT, self.sink_tasks)
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        n = tup.values.n
        # A normal (shuffle-grouped) emit; ask which task(s) it went to.
        probe_tasks = self.emit([n], stream="probe", need_task_ids=True)
        # A direct emit: this bolt picks the receiving task itself.
        direct_task = self.sink_tasks[n % len(self.sink_tasks)]
        self.emit([n], stream="routed", direct_task=direct_task)
        self.output.write({"n": n, "direct_task": direct_task, "probe_tasks": list(probe_tasks)})
