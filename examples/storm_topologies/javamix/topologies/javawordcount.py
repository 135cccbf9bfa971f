"""The mixed topology's word count in Java only, for benchmarks: spout, split, count."""

from streamparse import Grouping, JavaBolt, JavaSpout, Topology


class JavaWordCount(Topology):
    sentences = JavaSpout.spec(full_class_name="javamix.SentenceSpout", args_list=[],
                               outputs=["id", "sentence"])
    split = JavaBolt.spec(full_class_name="javamix.SplitBolt", args_list=[],
                          inputs={sentences: Grouping.SHUFFLE}, par=2, outputs=["word"])
    count = JavaBolt.spec(full_class_name="javamix.CountBolt", args_list=["word"],
                          inputs={split: Grouping.fields("word")}, par=2,
                          outputs=["word", "count"])
