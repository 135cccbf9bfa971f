from streamparse import Grouping, Topology

from bolts.probes import FlakyBolt, RecordingBolt
from spouts.numbers import NumberSpout


class Probes(Topology):
    numbers = NumberSpout.spec()
    flaky = FlakyBolt.spec(inputs={numbers: Grouping.fields("n")}, par=2)
    recording = RecordingBolt.spec(inputs={flaky: Grouping.fields("n")}, par=2)
