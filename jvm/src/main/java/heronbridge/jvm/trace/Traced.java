package heronbridge.jvm.trace;

import heronbridge.jvm.HostError;
import heronbridge.jvm.plan.ComponentSpec;
import java.util.Map;
import java.util.function.Function;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.IComponent;
import org.apache.storm.topology.OutputFieldsDeclarer;

/**
 * What TracedSpout and TracedBolt share: the traced component, made from its Java object
 * spec (as ComponentSpec reads it), declaring and configured as itself, and the tracer
 * that is started with it and closed after it.
 */
abstract class Traced<C extends IComponent> implements IComponent {
    private static final long serialVersionUID = 1L;
    final C component;
    private final String options;
    transient Tracer tracer;

    /**
     * `spec`: the component's Java object spec as JSON; `options`: the tracing options as
     * JSON; `accept`: what was made, as the kind of component traced here, or null.
     */
    Traced(String spec, String options, String what, String expected, Function<Object, C> accept) {
        String where = what + " " + spec;
        Object made = ComponentSpec.parse(spec, what).instantiate(Thread.currentThread().getContextClassLoader(),
            where);
        C accepted = accept.apply(made);
        if (accepted == null) {
            throw new HostError(where + ": expected " + expected + ", received a " + made.getClass().getName());
        }
        this.component = accepted;
        this.options = options;
    }

    final Tracer startTracer(Map<String, Object> conf, TopologyContext context, boolean spout) {
        tracer = new Tracer(options, spout);
        tracer.start(conf, context);
        return tracer;
    }

    /** The component's own close (or cleanup), then the tracer's, whatever the first did. */
    final void closeAfter(Runnable close) {
        try {
            close.run();
        } finally {
            tracer.close();
        }
    }

    @Override
    public final void declareOutputFields(OutputFieldsDeclarer declarer) {
        component.declareOutputFields(declarer);
    }

    @Override
    public final Map<String, Object> getComponentConfiguration() {
        return component.getComponentConfiguration();
    }
}
