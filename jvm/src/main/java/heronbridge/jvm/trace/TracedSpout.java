package heronbridge.jvm.trace;

import java.util.List;
import java.util.Map;
import org.apache.storm.spout.ISpoutOutputCollector;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.IRichSpout;

/**
 * A spout under the conformance suite's tracing: the spout its first argument names (a
 * Java object spec, as ComponentSpec reads it) made and run as it is, every emit and
 * callback traced, and nextTuple no longer called once the run's bound stops it.
 */
public final class TracedSpout extends Traced<IRichSpout> implements IRichSpout {
    private static final long serialVersionUID = 1L;

    /** `spec`: the spout's Java object spec as JSON; `options`: the tracing options as JSON. */
    public TracedSpout(String spec, String options) {
        super(spec, options, "the traced spout", "an IRichSpout",
            made -> made instanceof IRichSpout ? (IRichSpout) made : null);
    }

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        Tracer t = startTracer(conf, context, true);
        component.open(conf, context, new SpoutOutputCollector(new ISpoutOutputCollector() {
            @Override
            public List<Integer> emit(String streamId, List<Object> tuple, Object messageId) {
                List<Integer> targets = collector.emit(streamId, tuple, messageId);
                t.emit(streamId, tuple, messageId, null, null, targets);
                return targets;
            }

            @Override
            public void emitDirect(int taskId, String streamId, List<Object> tuple, Object messageId) {
                collector.emitDirect(taskId, streamId, tuple, messageId);
                t.emit(streamId, tuple, messageId, null, taskId, null);
            }

            @Override
            public long getPendingCount() {
                return collector.getPendingCount();
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
    public void nextTuple() {
        if (!tracer.next()) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            component.nextTuple();
        } finally {
            tracer.nextDone();
        }
    }

    @Override
    public void ack(Object msgId) {
        tracer.spoutCallback(true, msgId);
        component.ack(msgId);
    }

    @Override
    public void fail(Object msgId) {
        tracer.spoutCallback(false, msgId);
        component.fail(msgId);
    }

    @Override
    public void activate() {
        tracer.activation(true);
        component.activate();
    }

    @Override
    public void deactivate() {
        tracer.activation(false);
        component.deactivate();
    }

    @Override
    public void close() {
        closeAfter(component::close);
    }
}
