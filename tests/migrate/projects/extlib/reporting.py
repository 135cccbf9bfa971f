"""A library's mixin written for pystorm, outside the project the codemod migrates."""


class Reporting:
    def initialize(self, conf, ctx):
        self.reporter = (ctx["componentid"], conf.get("topology.message.timeout.secs"))

    def report(self):
        return [*self.reporter, self.component_name]
