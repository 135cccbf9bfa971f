"""
Word count from Kafka to Kafka: lines from the topic `kafka.spout.topics` (`lines`), each
word's running count to the topic `kafka.bolt.topic` (`counts`).
"""

from streamparse import Grouping, Topology

from bolts.sink import CountSink
from bolts.words import CountBolt, SplitBolt
from spouts.lines import LineSpout


class KafkaWordCount(Topology):
    lines = LineSpout.spec(par=2)
    split = SplitBolt.spec(inputs={lines: Grouping.SHUFFLE}, par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    sink = CountSink.spec(inputs={count: Grouping.SHUFFLE}, par=1,
                          config={"kafka.bolt.key.field": "word",
                                  "kafka.bolt.message.field": "count"})
