package jvmtests.beans;

import java.util.Map;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;
import org.apache.storm.utils.Utils;

/** Emits (Reading.of(id), id, Reading.extras(id)...) for ids 0 .. `beans.count` - 1, tracked by id; a failed id is emitted again. */
public class ReadingSpout extends BaseRichSpout {
    private SpoutOutputCollector collector;
    private long next;
    private long total;
    private final java.util.ArrayDeque<Long> failed = new java.util.ArrayDeque<>();

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        this.collector = collector;
        Object count = conf.get("beans.count");
        total = count == null ? 20 : ((Number) count).longValue();
    }

    @Override
    public void nextTuple() {
        Long id = failed.poll();
        if (id == null && next < total) {
            id = next++;
        }
        if (id == null) {
            Utils.sleep(1);
            return;
        }
        Values values = new Values(Reading.of(id), id);
        values.addAll(Reading.extras(id));
        collector.emit(values, id);
    }

    @Override
    public void fail(Object id) {
        failed.add((Long) id);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("reading", "id", "symbol", "ratio", "extremes", "numbers"));
    }
}
