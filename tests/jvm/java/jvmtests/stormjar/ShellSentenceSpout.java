package jvmtests.stormjar;

import java.util.Map;
import org.apache.storm.spout.ShellSpout;
import org.apache.storm.topology.IRichSpout;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;

/** Storm's own ShellSpout running sentences.py (pystorm, speaking multilang) from the jar's resources/. */
public class ShellSentenceSpout extends ShellSpout implements IRichSpout {
    public ShellSentenceSpout() {
        super("python3", "sentences.py");
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("id", "sentence"));
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        return null;
    }
}
