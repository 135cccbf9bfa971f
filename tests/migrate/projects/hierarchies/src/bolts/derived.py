"""Subclasses of the base bolt, in every way of passing initialize on."""

from streamparse import Bolt

from bolts.base import Tagging


class Doubling(Tagging):
    """super().initialize, positionally, first thing."""

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        self.factor = 2


class Tripling(Doubling):
    """Two levels down, through Base.initialize(self, ...)."""

    def initialize(self, stormconf, context):
        Doubling.initialize(self, stormconf, context)
        self.factor = 3


class Quadrupling(Tripling):
    """Three levels down, passing *args and **kwargs on."""

    def initialize(self, *args, **kwargs):
        super().initialize(*args, **kwargs)
        self.factor = 4


class Keyword(Tagging):
    """By keyword, after a statement that reads nothing of pystorm's."""

    def initialize(self, conf, ctx):
        self.factor = 5
        super().initialize(conf=conf, ctx=ctx)


class Early(Tagging):
    """Reads pystorm's attributes before passing on."""

    def initialize(self, conf, ctx):
        self.first_seen = (self.task_id, ctx["taskid"])
        super().initialize(conf, ctx)
        self.factor = 6

    def process(self, tup):
        self.emit([tup.values[0], [self.tag, list(self.first_seen)]])


class Inherited(Tagging):
    """No initialize of its own."""

    factor = 7


class Logged(Tagging):
    """A process passing on to the base's through super()."""

    def process(self, tup):
        self.logger.info("n=%s", tup.values[0])
        super().process(tup)


class Plain(Bolt):
    """No base of the project's, and no initialize: reads task_id in process."""

    outputs = ["n", "task"]

    def process(self, tup):
        self.emit([tup.values[0], self.task_id])
