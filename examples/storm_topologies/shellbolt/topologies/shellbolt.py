"""
A Python spout and bolt around a multilang bolt started as a plain script.
"""

from streamparse import Grouping, ShellBolt, Topology

from bolts.wordcount import WordCountBolt
from spouts.sentences import SentenceSpout


class ShellBoltTopology(Topology):
    sentences = SentenceSpout.spec()
    split = ShellBolt.spec(
        command="python",
        script="splitsentence.py",
        inputs={sentences: Grouping.SHUFFLE},
        par=2,
        outputs=["word"],
    )
    counts = WordCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
