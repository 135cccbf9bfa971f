package heronbridge.jvm.trace;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.storm.task.IOutputCollector;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.BasicBoltExecutor;
import org.apache.storm.topology.IBasicBolt;
import org.apache.storm.topology.IRichBolt;
import org.apache.storm.tuple.Tuple;

/**
 * A bolt under the conformance suite's tracing: the bolt its first argument names (an
 * IRichBolt, or an IBasicBolt run as Storm's BasicBoltExecutor runs it) made and run as it
 * is, every input, emit, ack and fail traced, and the run's fail and drop faults applied to
 * its input.
 */
public final class TracedBolt extends Traced<IRichBolt> implements IRichBolt {
    private static final long serialVersionUID = 1L;
    private transient OutputCollector out;

    /** `spec`: the bolt's Java object spec as JSON; `options`: the tracing options as JSON. */
    public TracedBolt(String spec, String options) {
        super(spec, options, "the traced bolt", "an IRichBolt or IBasicBolt", TracedBolt::asRichBolt);
    }

    private static IRichBolt asRichBolt(Object made) {
        if (made instanceof IBasicBolt) {
            return new BasicBoltExecutor((IBasicBolt) made);
        }
        return made instanceof IRichBolt ? (IRichBolt) made : null;
    }

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        Tracer t = startTracer(conf, context, false);
        out = collector;
        component.prepare(conf, context, new OutputCollector(new IOutputCollector() {
            @Override
            public List<Integer> emit(String streamId, Collection<Tuple> anchors, List<Object> tuple) {
                List<Integer> targets = collector.emit(streamId, anchors, tuple);
                t.emit(streamId, tuple, null, anchors, null, targets);
                return targets;
            }

            @Override
            public void emitDirect(int taskId, String streamId, Collection<Tuple> anchors, List<Object> tuple) {
                collector.emitDirect(taskId, streamId, anchors, tuple);
                t.emit(streamId, tuple, null, anchors, taskId, null);
            }

            @Override
            public void ack(Tuple input) {
                t.ackOrFail(input, true);
                collector.ack(input);
            }

            @Override
            public void fail(Tuple input) {
                t.ackOrFail(input, false);
                collector.fail(input);
            }

            @Override
            public void resetTimeout(Tuple input) {
                collector.resetTimeout(input);
            }

            @Override
            public void flush() {
                collector.flush();
            }

            @Override
            public void reportError(Throwable error) {
                t.error(error);
                collector.reportError(error);
            }
        }));
    }

    @Override
    public void execute(Tuple input) {
        if (tracer.receive(input, () -> out.fail(input))) {
            component.execute(input);
        }
    }

    @Override
    public void cleanup() {
        closeAfter(component::cleanup);
    }
}
