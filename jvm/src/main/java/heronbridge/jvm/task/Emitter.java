package heronbridge.jvm.task;

import heronbridge.jvm.HostError;
import heronbridge.jvm.plan.ComponentSpec;
import heronbridge.jvm.plan.Plan;
import heronbridge.jvm.plan.StormView;
import heronbridge.jvm.values.Codec;
import heronbridge.jvm.values.Multilang;
import heronbridge.jvm.values.StormKryo;
import heronbridge.jvm.wire.Frames;
import heronbridge.runtime.TopologyOuterClass.GroupingKind;
import heronbridge.runtime.TopologyOuterClass.InputDecl;
import heronbridge.runtime.TopologyOuterClass.StreamDecl;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.storm.daemon.GrouperFactory;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.grouping.CustomStreamGrouping;
import org.apache.storm.grouping.PartialKeyGrouping;
import org.apache.storm.hooks.info.EmitInfo;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.tuple.Fields;

/**
 * What a task emits through (runtime/instance/emitter.py, in Java): routing by Storm's own
 * groupers, one buffer per (stream, destination task) encoded as it fills, and the XOR
 * bookkeeping of at-least-once. {@link #flush} turns the buffers into frames.
 */
public class Emitter {
    final String topology;
    final String component;
    final int task;
    final boolean acking;
    final Codec codec;
    final Plan plan;
    /** The topology's Kryo (Task sets it); values that are not JSON-like reach Java tasks through it. */
    StormKryo kryo;
    final SplittableRandom random = new SplittableRandom(new SecureRandom().nextLong());
    final Map<String, OutStream> streams = new HashMap<>();
    final List<Buffer> buffers = new ArrayList<>();
    final ExceptionLog exceptions = new ExceptionLog();
    /** The task's loop thread, and how to wake it when another thread emits, acks or fails. */
    volatile Thread loopThread;
    volatile Runnable wake;
    /** The context whose task hooks (Storm's ITaskHook) see every emit, ack and fail; null: no hooks. */
    TopologyContext hooked;
    long emitted;
    long errorsReported;
    long bytesFlushed;
    long emitsAtFlush;

    /** Records bound for one task on one stream. */
    static final class Buffer {
        final int stream;
        final int task;
        final Codec.Batch batch;
        /** The task is a Java one: a value that is not JSON-like reaches it in Storm's Kryo bytes. */
        final boolean java;

        Buffer(int stream, int task, Codec.Batch batch, boolean java) {
            this.stream = stream;
            this.task = task;
            this.batch = batch;
            this.java = java;
        }
    }

    /**
     * An emit's values as each kind of destination receives them, when some value is not
     * JSON-like: Storm's Kryo bytes for a Java task (as Storm carries a tuple between
     * workers), what Storm's multilang JSON makes of it for any other (as a ShellBolt's
     * subprocess receives it). Made before anything of the emit is sent or counted, so that
     * a value neither can carry refuses the whole emit.
     */
    static final class Outgoing {
        final List<Object> toJava;
        final List<Object> toOthers;

        Outgoing(List<Object> toJava, List<Object> toOthers) {
            this.toJava = toJava;
            this.toOthers = toOthers;
        }
    }

    /** One subscription to one of our streams, and how Storm routes to it. */
    static final class Route {
        final CustomStreamGrouping grouper;
        final boolean loadAware;

        Route(CustomStreamGrouping grouper) {
            this.grouper = grouper;
            this.loadAware = grouper instanceof org.apache.storm.grouping.LoadAwareCustomStreamGrouping;
        }
    }

    static final class OutStream {
        final String name;
        final int index;
        final int nfields;
        final List<String> fields;
        final boolean direct;
        final List<Route> routes = new ArrayList<>();
        final Map<Integer, Buffer> byTask = new HashMap<>();
        final Map<Integer, Buffer> directTasks = new HashMap<>();

        OutStream(String name, int index, List<String> fields, boolean direct) {
            this.name = name;
            this.index = index;
            this.fields = fields;
            this.nfields = fields.size();
            this.direct = direct;
        }
    }

    /** Storm's hooks see an emit once it is routed, outside the collector's lock (a hook may emit). */
    void hookEmit(String stream, List<Object> values, List<Integer> targets) {
        if (hooked != null) {
            new EmitInfo(values, stream, task, targets).applyOn(hooked);
        }
    }

    Emitter(Plan plan, int task, Codec codec, boolean acking, WorkerTopologyContext worker, Map<String, Object> conf,
            ClassLoader loader) {
        this.topology = plan.name;
        this.task = task;
        this.component = plan.taskComponent.get(task);
        this.acking = acking;
        this.codec = codec;
        this.plan = plan;
        for (StreamDecl s : plan.components.get(component).getOutputsList()) {
            OutStream out = new OutStream(s.getName(), plan.streamIndex(component, s.getName()), s.getFieldsList(),
                s.getDirect());
            for (Map.Entry<String, InputDecl> sub : plan.subscribers(component, s.getName())) {
                List<Integer> tasks = plan.componentTasks.get(sub.getKey());
                for (Integer t : tasks) {
                    Buffer b = out.byTask.get(t);
                    if (b == null) {
                        b = new Buffer(out.index, t, codec.batch(), plan.javaComponents.contains(sub.getKey()));
                        out.byTask.put(t, b);
                        buffers.add(b);
                    }
                    if (sub.getValue().getGrouping() == GroupingKind.DIRECT) {
                        out.directTasks.put(t, b);
                    }
                }
                if (sub.getValue().getGrouping() != GroupingKind.DIRECT) {
                    out.routes.add(new Route(grouper(worker, conf, out, sub.getKey(), sub.getValue(), tasks, loader)));
                }
            }
            streams.put(s.getName(), out);
        }
    }

    private CustomStreamGrouping grouper(WorkerTopologyContext worker, Map<String, Object> conf, OutStream out,
                                         String bolt, InputDecl in, List<Integer> tasks, ClassLoader loader) {
        String where = loc() + ", stream '" + out.name + "' to '" + bolt + "'";
        CustomStreamGrouping g;
        GroupingKind kind = in.getGrouping();
        if (kind == GroupingKind.PARTIAL_KEY) {
            g = new PartialKeyGrouping(new Fields(in.getFieldsList()));
        } else if (kind == GroupingKind.CUSTOM) {
            g = custom(in, loader, where);
        } else {
            return GrouperFactory.mkGrouper(worker, component, out.name, new Fields(out.fields),
                StormView.grouping(in), new ArrayList<>(tasks), conf);
        }
        g.prepare(worker, new GlobalStreamId(component, out.name), new ArrayList<>(tasks));
        return g;
    }

    /** A Java custom grouping made from its spec (Storm's customGrouping), not yet prepared. */
    static CustomStreamGrouping custom(InputDecl in, ClassLoader loader, String where) {
        Object made = ComponentSpec.parse(in.getCustom(), where).instantiate(loader, where);
        if (!(made instanceof CustomStreamGrouping)) {
            throw new HostError(where + ": expected a CustomStreamGrouping, received " + made.getClass().getName());
        }
        return (CustomStreamGrouping) made;
    }

    final String loc() {
        return HostError.where(topology, component, task);
    }

    /** The tasks a regular (non-direct) emit goes to; checks the emit first. */
    final List<Integer> route(OutStream out, List<Object> values) {
        List<Route> routes = out.routes;
        if (routes.size() == 1) {
            return routes.get(0).grouper.chooseTasks(task, values);
        }
        if (routes.isEmpty()) {
            return Collections.emptyList();
        }
        List<Integer> all = new ArrayList<>();
        for (Route r : routes) {
            all.addAll(r.grouper.chooseTasks(task, values));
        }
        return all;
    }

    final OutStream check(String stream, List<Object> values, Integer directTask) {
        OutStream out = streams.get(stream);
        if (out == null) {
            throw new HostError(loc() + ": emit on undeclared stream '" + stream + "'; declared streams are "
                + new java.util.TreeSet<>(streams.keySet()));
        }
        if (values == null || values.size() != out.nfields) {
            throw new HostError(loc() + ": emit on stream '" + stream + "' expects " + out.nfields
                + " values for fields " + out.fields + ", received " + (values == null ? "null" : values.size()
                + ": " + values));
        }
        if (directTask == null && out.direct) {
            throw new HostError(loc() + ": stream '" + stream + "' is direct; emit on it needs emitDirect");
        }
        if (directTask != null && !out.direct) {
            throw new HostError(loc() + ": direct emit to task " + directTask + " on stream '" + stream
                + "', which is not a direct stream; declare it direct or use emit");
        }
        return out;
    }

    /**
     * Null when every value crosses as itself to every target (the usual case: nothing is
     * made), else the values for Java tasks and for the others among {@code targets}; throws
     * (naming the value, the destination and what was expected) when a value cannot reach
     * one of them. A Java task gets a value in Storm's Kryo bytes unless the format gives it
     * back as the same class (a Float, a Short, a LinkedList: as Storm's Kryo carries them);
     * another task gets it as itself when the format carries it, else as Storm's multilang
     * JSON makes it.
     */
    final Outgoing outgoing(OutStream out, List<Integer> targets, List<Object> values) {
        int n = values.size();
        int i = 0;
        while (i < n && codec.keeps(values.get(i))) {
            i++;
        }
        if (i == n || targets.isEmpty()) {
            return null;
        }
        Buffer toJava = null;
        Buffer toOther = null;
        for (Integer t : targets) {
            Buffer b = out.byTask.get(t);
            if (b != null && b.java) {
                toJava = toJava == null ? b : toJava;
            } else if (b != null) {
                toOther = toOther == null ? b : toOther;
            }
        }
        if (toJava == null) {  // only tasks in other languages: what the format carries goes as itself
            int j = i;
            while (j < n && codec.carries(values.get(j))) {
                j++;
            }
            if (j == n) {
                return null;
            }
        }
        List<Object> java = toJava == null ? null : new ArrayList<>(values);
        List<Object> others = toOther == null ? null : new ArrayList<>(values);
        for (; i < n; i++) {
            Object v = values.get(i);
            if (codec.keeps(v)) {
                continue;
            }
            if (java != null) {
                try {
                    if (kryo == null) {
                        throw new Codec.BadValue(v, "this task has no Kryo to write it with");
                    }
                    java.set(i, codec.kryoValue(v, kryo.write(v)));
                } catch (Codec.BadValue e) {
                    throw refused(out, toJava, i, v, e, "a value Storm's Kryo serializes under this topology's "
                        + "config (" + (kryo == null ? "none" : kryo.configured) + ")");
                }
            }
            if (others != null && !codec.carries(v)) {
                try {
                    others.set(i, Multilang.value(v));
                } catch (Codec.BadValue e) {
                    throw refused(out, toOther, i, v, e, "a value json-smart writes as JSON that a multilang "
                        + "subprocess reads (what Storm gives a task in another language)");
                }
            }
        }
        return new Outgoing(java, others);
    }

    private HostError refused(OutStream out, Buffer to, int index, Object value, Codec.BadValue e, String or) {
        String dest = plan.taskComponent.get(to.task);
        return new HostError(loc() + ": emit on stream '" + out.name + "' refused, nothing of it sent: value #" + index
            + " (field '" + out.fields.get(index) + "') for task " + to.task + " of " + (to.java ? "Java " : "")
            + "component '" + dest + "' is " + Codec.describe(value) + " (" + e.getMessage() + "); expected "
            + Codec.EXPECTED + ", or " + or, e);
    }

    final void add(Buffer b, List<Object> values, Outgoing o, long root, long edge, long[] pairs) {
        add(b, o == null ? values : b.java ? o.toJava : o.toOthers, root, edge, pairs);
    }

    final void add(Buffer b, List<Object> values, long root, long edge, long[] pairs) {
        try {
            b.batch.add(values, root, edge, pairs);
        } catch (Codec.BadValue e) {
            throw new HostError(loc() + ": emitted values the " + codecName() + " serializer cannot carry to task "
                + b.task + ": " + values + " holds " + Codec.describe(e.value) + " (" + e.getMessage() + "); expected "
                + Codec.EXPECTED, e);
        }
    }

    private String codecName() {
        return codec instanceof heronbridge.jvm.values.JsonCodec ? "json" : "msgpack";
    }

    /**
     * A component's own thread emitted, acked or failed (ShellBolt's reader, a windowed
     * bolt's timer): the loop flushes at once instead of at its next turn.
     */
    final void fromElsewhere() {
        Runnable w = wake;
        if (w != null && Thread.currentThread() != loopThread) {
            w.run();
        }
    }

    final long edge() {
        return random.nextLong() >>> 1;
    }

    public void reportError(Throwable error) {
        synchronized (this) {
            errorsReported++;
            exceptions.add(error);
        }
        System.err.println(loc() + ": reported error: " + error);
        error.printStackTrace();
    }

    /** Subclasses add their ack bookkeeping frames, before (inits) or after (acks, fails) the data. */
    void controlFrames(List<byte[]> out, boolean before) {
    }

    /** Frames for everything emitted, acked and failed since the last flush. */
    synchronized List<byte[]> frames() {
        List<byte[]> out = new ArrayList<>();
        controlFrames(out, true);
        for (Buffer b : buffers) {
            if (b.batch.count() > 0) {
                byte[] records = b.batch.take();
                bytesFlushed += records.length;
                out.add(Frames.dataFrame(b.task, task, b.stream, records, records.length));
            }
        }
        controlFrames(out, false);
        emitsAtFlush = emitted;
        return out;
    }

    /** Bytes on the wire per emit so far (64 before the first flush): what bounds a spout's burst. */
    synchronized double bytesPerEmit() {
        return emitsAtFlush > 0 && bytesFlushed > 0 ? (double) bytesFlushed / emitsAtFlush : 64.0;
    }

    synchronized boolean unflushed() {
        return emitted != emitsAtFlush;
    }

    static void grow(long[][] holder, int need) {
        if (holder[0].length < need) {
            holder[0] = java.util.Arrays.copyOf(holder[0], Math.max(need, holder[0].length * 2));
        }
    }
}
