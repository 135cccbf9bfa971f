"""A mixed topology: a Java spout, a Python bolt, a Java bolt, a Python sink."""

from streamparse import Grouping, JavaBolt, JavaSpout, Topology

from bolts.words import ResultBolt, SplitBolt


class JavaMix(Topology):
    sentences = JavaSpout.spec(full_class_name="javamix.SentenceSpout", args_list=[],
                               outputs=["id", "sentence"])
    split = SplitBolt.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    count = JavaBolt.spec(full_class_name="javamix.CountBolt", args_list=["word"],
                          inputs={split: Grouping.fields("word")}, par=2,
                          outputs=["word", "count"])
    results = ResultBolt.spec(inputs={count: Grouping.fields("word")})

