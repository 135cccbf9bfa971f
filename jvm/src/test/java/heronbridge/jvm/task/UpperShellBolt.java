package heronbridge.jvm.task;

import java.util.Map;
import org.apache.storm.task.ShellBolt;
import org.apache.storm.topology.IRichBolt;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;

/** Storm's own ShellBolt running `upper.py` (a multilang bolt) from the task's code folder. */
public class UpperShellBolt extends ShellBolt implements IRichBolt {
    public UpperShellBolt() {
        super("python3", "upper.py");
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("word", "count"));
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        return null;
    }
}
