package jvmtests;

import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;

/** A bolt whose prepare throws: its task must say so by topology, component and task. */
public class PrepareThrows extends BaseRichBolt {
    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        throw new IllegalStateException("no database at db.invalid");
    }

    @Override
    public void execute(Tuple input) {
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
    }
}
