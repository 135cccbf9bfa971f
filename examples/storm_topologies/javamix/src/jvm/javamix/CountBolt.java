package javamix;

import java.util.HashMap;
import java.util.Map;
import org.apache.storm.topology.BasicOutputCollector;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseBasicBolt;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;

/** Counts the values of one input field (its constructor's argument); emits (value, count). */
public class CountBolt extends BaseBasicBolt {
    private final String field;
    private final Map<String, Long> counts = new HashMap<>();

    public CountBolt(String field) {
        this.field = field;
    }

    @Override
    public void execute(Tuple input, BasicOutputCollector collector) {
        String value = input.getStringByField(field);
        long count = counts.merge(value, 1L, Long::sum);
        collector.emit(new Values(value, count));
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields(field, "count"));
    }
}
