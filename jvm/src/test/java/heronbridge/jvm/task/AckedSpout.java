package heronbridge.jvm.task;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;

/** A spout that emits `count` words with message ids and records its acks and fails. */
public class AckedSpout extends BaseRichSpout {
    static final List<Object> ACKED = new CopyOnWriteArrayList<>();
    static final List<Object> FAILED = new CopyOnWriteArrayList<>();
    /** Longer runs (a throughput check) keep no record. */
    static final long RECORDED = 1000;
    private final long count;
    private long next;
    private SpoutOutputCollector collector;

    public AckedSpout(Long count) {
        this.count = count;
    }

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        this.collector = collector;
    }

    @Override
    public void nextTuple() {
        if (next < count) {
            collector.emit(new Values("w" + next), "id-" + next);
            next++;
        }
    }

    @Override
    public void ack(Object msgId) {
        if (count <= RECORDED) {
            ACKED.add(msgId);
        }
    }

    @Override
    public void fail(Object msgId) {
        if (count <= RECORDED) {
            FAILED.add(msgId);
        }
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("word"));
    }
}
