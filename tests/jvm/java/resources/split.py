"""The words of a sentence (its second value), as javamix's SplitBolt splits them: a
multilang bolt written with pystorm, which Storm's ShellBolt (ShellSplitBolt) runs from a
topology jar's resources/."""

import re

from pystorm import Bolt


class Split(Bolt):
    def process(self, tup):
        for word in re.findall(r"[a-z]+", tup.values[1].lower()):
            self.emit([word])


if __name__ == "__main__":
    Split().run()
