"""storm-client's own TestWordSpout and TestWordCounter around a Python relay, which
records every word it passes on."""

from bolts.words import RelayBolt, SinkBolt
from streamparse import Grouping, JavaBolt, JavaSpout, Topology


class StormTestingWords(Topology):
    words = JavaSpout.spec(full_class_name="org.apache.storm.testing.TestWordSpout",
                           args_list=[], outputs=["word"])
    relay = RelayBolt.spec(inputs={words: Grouping.SHUFFLE})
    count = JavaBolt.spec(full_class_name="org.apache.storm.testing.TestWordCounter",
                          args_list=[], inputs={relay: Grouping.fields("word")}, par=2,
                          outputs=["word", "count"])
    sink = SinkBolt.spec(inputs={count: Grouping.SHUFFLE})
