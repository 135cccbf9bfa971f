"""
Named streams: one splitter feeding two different consumers.
"""

from streamparse import Grouping, Topology

from bolts.counters import LengthRecorderBolt, WordCounterBolt
from bolts.splitter import SplitterBolt
from spouts.sentences import SentenceSpout


class MultiStream(Topology):
    sentences = SentenceSpout.spec()
    splitter = SplitterBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    word_counts = WordCounterBolt.spec(inputs={splitter["words"]: Grouping.fields("word")}, par=2)
    lengths = LengthRecorderBolt.spec(inputs={splitter["lengths"]: Grouping.SHUFFLE}, par=2)
