"""Mixins: plain classes that read what pystorm set on the component."""


class Describing:
    def describe(self):
        tasks = sorted(int(t) for t in self.context["task->component"])
        self.logger.info("describing %s", self.component_name)
        return [self.component_name, self.task_id - tasks[0], hasattr(self.logger, "info")]


class Counting:
    """A mixin with an initialize of its own, passing on cooperatively."""

    def initialize(self, conf, ctx):
        self.counted = 0
        super().initialize(conf, ctx)

    def count(self):
        self.counted += 1
        return self.counted
