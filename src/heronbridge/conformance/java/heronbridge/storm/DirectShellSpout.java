package heronbridge.storm;

import java.util.HashSet;
import org.apache.storm.flux.wrappers.spouts.FluxShellSpout;
import org.apache.storm.topology.OutputFieldsDeclarer;

/**
 * Flux's shell spout, plus streams declared direct (streamparse's Stream(direct=True)),
 * named in the Flux YAML by the config method setDirectStream.
 */
public class DirectShellSpout extends FluxShellSpout {
    private static final long serialVersionUID = 1L;
    private final HashSet<String> directStreams = new HashSet<>();

    public DirectShellSpout(String[] command) {
        super(command);
    }

    public DirectShellSpout(String[] command, String[] outputFields) {
        super(command, outputFields);
    }

    public void setDirectStream(String streamId) {
        directStreams.add(streamId);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        super.declareOutputFields(new DirectStreamsDeclarer(declarer, directStreams));
    }
}
