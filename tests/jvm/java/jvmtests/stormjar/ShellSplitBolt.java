package jvmtests.stormjar;

import java.util.Map;
import org.apache.storm.task.ShellBolt;
import org.apache.storm.topology.IRichBolt;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;

/** Storm's own ShellBolt running split.py (pystorm, speaking multilang) from the jar's resources/. */
public class ShellSplitBolt extends ShellBolt implements IRichBolt {
    public ShellSplitBolt() {
        super("python3", "split.py");
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("word"));
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        return null;
    }
}
