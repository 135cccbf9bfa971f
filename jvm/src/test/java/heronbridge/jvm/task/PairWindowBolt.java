package heronbridge.jvm.task;

import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseWindowedBolt;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;
import org.apache.storm.windowing.TupleWindow;

/** A tumbling window of two tuples: emits the window's words joined, anchored to both. */
public class PairWindowBolt extends BaseWindowedBolt {
    private OutputCollector collector;

    public PairWindowBolt() {
        withTumblingWindow(Count.of(2));
    }

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
    }

    @Override
    public void execute(TupleWindow window) {
        StringBuilder words = new StringBuilder();
        for (Tuple t : window.get()) {
            words.append(words.length() == 0 ? "" : "+").append(t.getString(0));
        }
        collector.emit(window.get(), new Values(words.toString(), window.get().size()));
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("word", "count"));
    }
}
