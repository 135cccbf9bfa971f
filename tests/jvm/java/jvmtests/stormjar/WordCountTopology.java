package jvmtests.stormjar;

import javamix.CountBolt;
import javamix.SentenceSpout;
import javamix.SplitBolt;
import org.apache.storm.Config;
import org.apache.storm.StormSubmitter;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;

/**
 * A Java-only word count, submitted as `storm jar` submits one: StormSubmitter with the
 * StormTopology TopologyBuilder makes (every component a serialized Java object).
 * Arguments: the topology's name, the folder RecordBolt writes to, rounds of the text,
 * and optionally "shell": the sentences from Storm's ShellSpout (ShellSentenceSpout) and
 * split with its ShellBolt (ShellSplitBolt), multilang subprocesses, instead of Java.
 */
public final class WordCountTopology {
    private WordCountTopology() {
    }

    public static void main(String[] args) throws Exception {
        TopologyBuilder builder = new TopologyBuilder();
        boolean shell = args.length > 3 && "shell".equals(args[3]);
        if (shell) {
            builder.setSpout("sentences", new ShellSentenceSpout(), 1);
            builder.setBolt("split", new ShellSplitBolt(), 2).shuffleGrouping("sentences");
        } else {
            builder.setSpout("sentences", new SentenceSpout(), 1);
            builder.setBolt("split", new SplitBolt(), 2).shuffleGrouping("sentences");
        }
        builder.setBolt("count", new CountBolt("word"), 2).fieldsGrouping("split", new Fields("word"));
        builder.setBolt("record", new RecordBolt(), 1).customGrouping("count", new LowestTaskGrouping());
        Config conf = new Config();
        conf.setNumWorkers(1);
        conf.setNumAckers(1);
        conf.put("javamix.rounds", Long.parseLong(args[2]));
        conf.put(RecordBolt.OUT, args[1]);
        StormSubmitter.submitTopology(args[0], conf, builder.createTopology());
    }
}
