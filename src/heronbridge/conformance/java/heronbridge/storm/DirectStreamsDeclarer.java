package heronbridge.storm;

import java.util.Set;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.tuple.Fields;
import org.apache.storm.utils.Utils;

/**
 * Passes a component's stream declarations on, declaring the streams named direct as
 * direct: Flux's shell wrappers declare every stream as a regular one.
 */
final class DirectStreamsDeclarer implements OutputFieldsDeclarer {
    private final OutputFieldsDeclarer declarer;
    private final Set<String> direct;

    DirectStreamsDeclarer(OutputFieldsDeclarer declarer, Set<String> direct) {
        this.declarer = declarer;
        this.direct = direct;
    }

    @Override
    public void declare(Fields fields) {
        declareStream(Utils.DEFAULT_STREAM_ID, false, fields);
    }

    @Override
    public void declare(boolean isDirect, Fields fields) {
        declareStream(Utils.DEFAULT_STREAM_ID, isDirect, fields);
    }

    @Override
    public void declareStream(String streamId, Fields fields) {
        declareStream(streamId, false, fields);
    }

    @Override
    public void declareStream(String streamId, boolean isDirect, Fields fields) {
        declarer.declareStream(streamId, isDirect || direct.contains(streamId), fields);
    }
}
