package heronbridge.jvm.task;

import java.util.List;
import org.apache.storm.task.GeneralTopologyContext;
import org.apache.storm.tuple.MessageId;
import org.apache.storm.tuple.TupleImpl;

/**
 * A tuple as a bolt receives it: Storm's TupleImpl, carrying the runtime's ack bookkeeping
 * (its root and the XOR of its edge with the edges of what was emitted anchored to it).
 */
public final class HbTuple extends TupleImpl {
    long root;
    long edge;
    long[] pairs;

    HbTuple(GeneralTopologyContext context, List<Object> values, String component, int task, String stream,
            long root, long edge, long[] pairs) {
        super(context, values, component, task, stream,
            root > 0 ? MessageId.makeRootId(root, edge) : MessageId.makeUnanchored());
        this.root = root;
        this.edge = edge;
        this.pairs = pairs;
    }
}
