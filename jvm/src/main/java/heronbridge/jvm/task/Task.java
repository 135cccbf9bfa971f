package heronbridge.jvm.task;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import heronbridge.jvm.HostError;
import heronbridge.jvm.plan.ComponentSpec;
import heronbridge.jvm.plan.Plan;
import heronbridge.jvm.plan.StormView;
import heronbridge.jvm.values.Codec;
import heronbridge.jvm.values.Record;
import heronbridge.jvm.values.StormKryo;
import heronbridge.jvm.wire.Frames;
import heronbridge.jvm.wire.Handshake;
import heronbridge.jvm.wire.Identity;
import heronbridge.jvm.wire.Link;
import heronbridge.runtime.Control;
import heronbridge.runtime.Plans;
import heronbridge.runtime.TopologyOuterClass;
import heronbridge.runtime.TopologyOuterClass.ComponentDecl;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.storm.Config;
import org.apache.storm.Constants;
import org.apache.storm.hooks.ITaskHook;
import org.apache.storm.hooks.info.BoltExecuteInfo;
import org.apache.storm.hooks.info.SpoutAckInfo;
import org.apache.storm.hooks.info.SpoutFailInfo;
import org.apache.storm.spout.ISpout;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.IBolt;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.BasicBoltExecutor;
import org.apache.storm.topology.IBasicBolt;
import org.apache.storm.topology.IComponent;
import org.apache.storm.topology.IStatefulBolt;
import org.apache.storm.topology.IWindowedBolt;
import org.apache.storm.topology.OutputFieldsGetter;
import org.apache.storm.topology.WindowedBoltExecutor;

/**
 * One task of a topology, a Storm 2 Java spout or bolt, on the runtime: registered with its
 * stream manager, hosting its component in this thread. Its loops move the bytes and keep
 * the time; when to call the component and what to tell it is its step's (SpoutStep,
 * BoltStep: runtime/instance/spout_step.py and bolt_step.py in Java, checked against the
 * vectors the Python step writes).
 */
public final class Task {
    public static final int EXIT_COMPONENT_ERROR = 1;
    public static final int EXIT_LOST_STREAM_MANAGER = 3;

    final String topologyId;
    final int task;
    final int container;
    final Identity stmgr;
    final String metricsPath;
    final byte[] secret;
    final int incarnation;
    final String codeDir;
    volatile boolean stopping;

    String topology = "?";
    String component = "?";
    Link link;
    Plan plan;
    StormView view;
    Settings settings;
    Codec codec;
    TopologyContext context;
    Map<String, Object> conf;
    Emitter emitter;
    SpoutCollector spoutOut;
    BoltCollector boltOut;
    ISpout spout;
    IBolt bolt;
    MetricsPublisher metrics;
    SpoutStep spoutStep;
    BoltStep boltStep;
    final List<Link.Batch> backlog = new ArrayList<>();
    long errorCount;

    public Task(String topologyId, int task, int container, Identity stmgr, String metricsPath, byte[] secret,
                int incarnation, String codeDir) {
        this.topologyId = topologyId;
        this.task = task;
        this.container = container;
        this.stmgr = stmgr;
        this.metricsPath = metricsPath;
        this.secret = secret;
        this.incarnation = incarnation;
        this.codeDir = codeDir;
    }

    String loc() {
        return HostError.where(topology, component, task);
    }

    static double seconds() {
        return System.nanoTime() / 1e9;
    }

    /** The task's life; returns the process's exit code. */
    public int run() {
        try {
            Control.RegisterInstanceResponse response = register(seconds() + 60);
            setup(response.getPplan());
            System.err.println(loc() + ": started (incarnation " + incarnation + ", pid "
                + ProcessHandle.current().pid() + ", JVM)");
            start();
            if (spout != null) {
                spoutLoop();
            } else {
                boltLoop();
            }
            flush();  // what the component emitted goes out before it closes (a ShellBolt halts as it dies)
            if (spout != null) {
                spout.close();
            } else {
                bolt.cleanup();
            }
            cleanupHooks();
            finish();
            return 0;
        } catch (Lost e) {
            System.err.println(loc() + ": lost the stream manager (" + e.getMessage() + "); exiting to be restarted");
            return EXIT_LOST_STREAM_MANAGER;
        } catch (Handshake.AuthError e) {
            System.err.println(loc() + ": " + e.getMessage());
            return EXIT_LOST_STREAM_MANAGER;
        } catch (Throwable e) {
            errorCount++;
            String what = e instanceof HostError ? e.getMessage() : loc() + ": the component raised " + e;
            System.err.println(what);
            e.printStackTrace();
            if (emitter != null) {
                emitter.exceptions.add(e);
                salvage();
            } else {
                diedBeforeStart(e);
            }
            return EXIT_COMPONENT_ERROR;
        }
    }

    /** The stream manager went away: the task ends to be restarted by its executor. */
    static final class Lost extends RuntimeException {
        Lost(String message) {
            super(message);
        }
    }

    private Control.RegisterInstanceResponse register(double deadline) throws IOException, InterruptedException {
        while (true) {
            try {
                link = Link.dial(stmgr, secret, Handshake.TASK, true);
                break;
            } catch (IOException e) {  // not listening yet, or going away: try again
                if (seconds() > deadline || stopping) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
        Control.RegisterInstanceRequest request = Control.RegisterInstanceRequest.newBuilder()
            .setTopologyId(topologyId).setTaskId(task).setPid((int) ProcessHandle.current().pid()).build();
        link.send(List.of(Frames.controlFrame(request, 0)));
        while (true) {
            Link.Batch batch = link.poll(200);
            if (batch != null) {
                if (batch.lost != null) {
                    throw new Lost(batch.lost);
                }
                for (int i = 0; i < batch.count; i++) {
                    int start = batch.offsets[2 * i];
                    if (Frames.kind(batch.data, start) != Frames.CONTROL) {
                        continue;
                    }
                    Message msg = Frames.parseControl(batch.data, start, batch.offsets[2 * i + 1]);
                    if (msg instanceof Control.RegisterInstanceResponse) {
                        Control.RegisterInstanceResponse r = (Control.RegisterInstanceResponse) msg;
                        if (!r.getStatus().getOk()) {
                            throw new HostError("task " + task + ": the stream manager refused its registration: "
                                + r.getStatus().getMessage());
                        }
                        // What came in the same read is handled once the component is set up.
                        int[] rest = Arrays.copyOfRange(batch.offsets, 2 * i + 2, 2 * batch.count);
                        backlog.add(new Link.Batch(batch.data, rest, batch.count - i - 1, null));
                        return r;
                    }
                }
            }
            if (seconds() > deadline || stopping) {
                throw new HostError("task " + task + ": no registration reply from the stream manager");
            }
        }
    }

    void setup(Plans.PhysicalPlan pplan) throws IOException {
        plan = new Plan(pplan.getTopology());
        topology = plan.name;
        component = plan.taskComponent.get(task);
        String myStmgr = null;
        for (Plans.InstanceInfo i : pplan.getInstancesList()) {
            if (i.getTaskId() == task) {
                myStmgr = i.getStmgrId();
            }
        }
        List<Integer> local = new ArrayList<>();
        for (Plans.InstanceInfo i : pplan.getInstancesList()) {
            if (i.getStmgrId().equals(myStmgr)) {
                local.add(i.getTaskId());
            }
        }
        local.sort(null);
        Path pids = Files.createTempDirectory("heronbridge-pids-");
        view = new StormView(plan, task, container, local, codeDir, pids.toString());
        metrics = new MetricsPublisher(topologyId, metricsPath, component, task, secret);  // before build: its errors go out
        build(plan.components.get(component));
    }

    /** Make the component (Storm's way), its conf, context and collector. */
    void build(ComponentDecl decl) {
        ComponentSpec spec = ComponentSpec.of(decl);
        if (spec == null) {
            throw new HostError(loc() + ": expected a Java component (config '" + StormView.COMPONENT_KEY
                + "'), received one whose class path is '" + decl.getClassPath() + "'");
        }
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        Object made = spec.instantiate(loader, loc());
        Map<String, Object> defaults = made instanceof IComponent ? ((IComponent) made).getComponentConfiguration() : null;
        conf = view.conf(component, defaults);
        settings = new Settings(conf, loc());
        if (settings.stateful()) {
            throw new HostError(loc() + ": expected ATMOST_ONCE or ATLEAST_ONCE for a Java task, received "
                + "EFFECTIVELY_ONCE (the JVM task host does not take part in checkpoints)");
        }
        try {
            codec = Codec.named(settings.serializer);
        } catch (IllegalArgumentException e) {
            throw new HostError(loc() + ": config 'heronbridge.serializer' " + e.getMessage());
        }
        StormKryo kryo = kryo();
        codec.readKryoWith(kryo);
        boolean isSpout = decl.getKind() == TopologyOuterClass.ComponentKind.SPOUT;
        if (isSpout) {
            if (!(made instanceof ISpout)) {
                throw new HostError(loc() + ": expected a spout (org.apache.storm.spout.ISpout) for " + spec.describe()
                    + ", received a " + made.getClass().getName());
            }
            spout = (ISpout) made;
        } else if (made instanceof IStatefulBolt) {
            throw new HostError(loc() + ": " + made.getClass().getName() + " is a stateful bolt (IStatefulBolt), which "
                + "needs Storm's checkpoint spout; the JVM task host does not run those");
        } else if (made instanceof IBasicBolt) {
            bolt = new BasicBoltExecutor((IBasicBolt) made);
        } else if (made instanceof IWindowedBolt) {
            bolt = new WindowedBoltExecutor((IWindowedBolt) made);
        } else if (made instanceof IBolt) {
            bolt = (IBolt) made;
        } else {
            throw new HostError(loc() + ": expected a bolt (IRichBolt, IBasicBolt or IWindowedBolt) for "
                + spec.describe() + ", received a " + made.getClass().getName());
        }
        checkDeclared(made);
        context = view.topologyContext(conf);
        if (isSpout) {
            emitter = spoutOut = new SpoutCollector(plan, task, codec, settings.acking(), view.workerContext(conf), conf,
                loader);
            spoutStep = new SpoutStep(spoutCalls(), settings, seconds());
        } else {
            emitter = boltOut = new BoltCollector(plan, task, codec, settings.acking(), view.workerContext(conf), conf,
                loader);
        }
        emitter.kryo = kryo;
        addTaskHooks(loader);
    }

    /**
     * The topology's Kryo, as every Java task of it builds it: Storm's defaults, the
     * topology's config, and the registrations of all its components. A registration Storm
     * cannot make (a class missing, with topology.skip.missing.kryo.registrations false)
     * stops the task at its start, as it stops a Storm worker.
     */
    private StormKryo kryo() {
        Map<String, Object> topologyConf = new HashMap<>(org.apache.storm.utils.Utils.readDefaultConfig());
        topologyConf.putAll(plan.config);
        List<Map<String, Object>> componentConfs = new ArrayList<>();
        for (ComponentDecl c : plan.components.values()) {
            componentConfs.add(Plan.parseConfig(c.getConfigJson(), topology, c.getName()));
        }
        try {
            return StormKryo.of(topologyConf, componentConfs);
        } catch (RuntimeException e) {
            throw new HostError(loc() + ": expected a Kryo config Storm builds (" + Config.TOPOLOGY_KRYO_REGISTER + ", "
                + Config.TOPOLOGY_KRYO_DECORATORS + ", " + Config.TOPOLOGY_KRYO_FACTORY + " on the task's classpath), "
                + "received one Storm's SerializationFactory refused: " + e, e);
        }
    }

    /** Storm's `topology.auto.task.hooks`: each class made with no arguments and prepared, as Storm's Task does. */
    private void addTaskHooks(ClassLoader loader) {
        Object names = conf.get(Config.TOPOLOGY_AUTO_TASK_HOOKS);
        if (names == null) {
            return;
        }
        if (!(names instanceof List)) {
            throw new HostError(loc() + ": expected config '" + Config.TOPOLOGY_AUTO_TASK_HOOKS
                + "' to be a list of ITaskHook class names, received " + names);
        }
        for (Object name : (List<?>) names) {
            Object hook;
            try {
                hook = Class.forName(String.valueOf(name), true, loader).getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException | LinkageError e) {
                throw new HostError(loc() + ": expected a task hook class with a public constructor taking no "
                    + "arguments on the task's classpath, received '" + name + "' (" + e + ")", e);
            }
            if (!(hook instanceof ITaskHook)) {
                throw new HostError(loc() + ": expected a task hook (org.apache.storm.hooks.ITaskHook), received a "
                    + hook.getClass().getName());
            }
            context.addTaskHook((ITaskHook) hook);
        }
        if (!context.getHooks().isEmpty()) {
            emitter.hooked = context;
        }
    }

    private void cleanupHooks() {
        for (ITaskHook hook : context.getHooks()) {
            hook.cleanup();
        }
    }

    /** What the component declares against what the plan routes: a stream the plan lacks cannot be emitted on. */
    private void checkDeclared(Object made) {
        if (!(made instanceof IComponent)) {
            return;
        }
        OutputFieldsGetter getter = new OutputFieldsGetter();
        ((IComponent) made).declareOutputFields(getter);
        TreeSet<String> missing = new TreeSet<>(getter.getFieldsDeclaration().keySet());
        for (TopologyOuterClass.StreamDecl s : plan.components.get(component).getOutputsList()) {
            missing.remove(s.getName());
        }
        missing.remove("__heronbridge_none");
        if (!missing.isEmpty()) {
            System.err.println(loc() + ": the component declares streams " + missing + " that the topology does not "
                + "list as its outputs; emits on them will be refused");
        }
    }

    void start() throws IOException {
        emitter.loopThread = Thread.currentThread();
        emitter.wake = link::wake;
        try {
            if (spout != null) {
                spout.open(conf, context, new SpoutOutputCollector(spoutOut));
            } else {
                bolt.prepare(conf, context, new OutputCollector(boltOut));
            }
        } catch (HostError e) {
            throw e;
        } catch (RuntimeException e) {
            throw new HostError(loc() + ": " + (spout != null ? "open" : "prepare") + " raised " + e, e);
        }
        link.send(List.of(Frames.controlFrame(Control.InstanceStarted.newBuilder().setTaskId(task).build(), 0)));
    }

    // -- the spout loop ---------------------------------------------------------------

    /** The spout as its step calls it, with Storm's task hooks. */
    private SpoutStep.Calls spoutCalls() {
        return new SpoutStep.Calls() {
            @Override
            public void ack(Object msgId, Long latencyMs) {
                spout.ack(msgId);
                if (emitter.hooked != null) {
                    new SpoutAckInfo(msgId, task, latencyMs).applyOn(context);
                }
            }

            @Override
            public void fail(Object msgId, Long latencyMs) {
                spout.fail(msgId);
                if (emitter.hooked != null) {
                    new SpoutFailInfo(msgId, task, latencyMs).applyOn(context);
                }
            }

            @Override
            public void activate() {
                spout.activate();
            }

            @Override
            public void deactivate() {
                spout.deactivate();
            }
        };
    }

    private int pending() {
        synchronized (spoutOut) {
            return spoutOut.pending.size();
        }
    }

    void spoutLoop() throws IOException, InterruptedException {
        SpoutCollector em = spoutOut;
        SpoutStep step = spoutStep;
        for (Link.Batch b : backlog) {
            spoutFrames(b);
        }
        backlog.clear();
        while (!stopping) {
            double now = seconds();
            // Writes block while the stream manager does not read: nothing is left unsent.
            double wait = step.waitFor(now, pending(), em.ackNow, 0);
            Link.Batch batch = link.poll((long) (wait * 1000));
            while (batch != null) {
                spoutFrames(batch);
                batch = link.poll(0);
            }
            if (em.unflushed()) {  // replays from fail(): out before nextTuple runs
                flush();
            }
            if (step.begin(seconds(), pending(), em.emitted, em.bytesPerEmit())) {
                em.now = System.nanoTime();
                do {
                    spout.nextTuple();
                    em.now = System.nanoTime();
                } while (step.returned(em.now / 1e9, pending(), em.emitted, em.ackNow));
            }
            flush();
            if (step.metricsDue(now)) {
                publish();
            }
        }
    }

    private void spoutFrames(Link.Batch batch) {
        if (batch.lost != null) {
            throw new Lost(batch.lost);
        }
        SpoutCollector em = spoutOut;
        double now = seconds();
        for (int i = 0; i < batch.count; i++) {
            int start = batch.offsets[2 * i];
            int end = batch.offsets[2 * i + 1];
            int kind = Frames.kind(batch.data, start);
            if (kind == Frames.CONTROL) {
                control(batch.data, start, end);
                continue;
            }
            if (kind != Frames.ACKED && kind != Frames.FAILED && kind != Frames.EXPIRED) {
                continue;
            }
            if ((end - start - Frames.HEADER_SIZE) % 8 != 0) {
                malformed(Frames.kindName(kind) + " frame", "not a whole number of roots");
                continue;
            }
            List<SpoutStep.Settled> entries = new ArrayList<>();
            int left;
            synchronized (em) {
                for (int at = start + Frames.HEADER_SIZE; at < end; at += 8) {
                    SpoutCollector.Pending p = em.pending.remove(Frames.i64(batch.data, at));
                    if (p != null) {
                        entries.add(new SpoutStep.Settled(p.msgId, p.emittedAt / 1e9));
                    }
                }
                left = em.pending.size();
            }
            spoutStep.settled(kind, now, entries, left);
        }
    }

    // -- the bolt loop ----------------------------------------------------------------

    void boltLoop() throws IOException, InterruptedException {
        BoltStep step = boltStep = new BoltStep(new Settings(conf, loc()), Task::seconds);
        List<Link.Batch> batches = new ArrayList<>(backlog);
        backlog.clear();
        while (!stopping) {
            double now = seconds();
            if (batches.isEmpty()) {
                double wait = step.waitFor(now, 0);  // writes block: nothing is left unsent
                Link.Batch b = link.poll((long) (wait * 1000));
                if (b != null) {
                    batches.add(b);
                }
            }
            for (Link.Batch batch : batches) {
                if (batch.lost != null) {
                    throw new Lost(batch.lost);
                }
                for (int i = 0; i < batch.count; i++) {
                    int start = batch.offsets[2 * i];
                    int end = batch.offsets[2 * i + 1];
                    int kind = Frames.kind(batch.data, start);
                    if (kind == Frames.DATA) {
                        executeFrame(batch.data, start, end);
                    } else if (kind == Frames.CONTROL) {
                        control(batch.data, start, end);
                    }
                }
            }
            batches.clear();
            now = seconds();
            if (step.tickDue(now)) {
                List<Object> values = new ArrayList<>();
                double freq = step.freq;
                values.add(freq == Math.rint(freq) ? (Object) (int) freq : (Object) freq);
                long t0 = System.nanoTime();
                HbTuple tick = new HbTuple(context, values, StormView.SYSTEM, (int) Constants.SYSTEM_TASK_ID,
                    Constants.SYSTEM_TICK_STREAM_ID, 0, 0, null);
                bolt.execute(tick);
                long took = System.nanoTime() - t0;
                step.ran(1, took);
                if (boltOut.hooked != null) {
                    new BoltExecuteInfo(tick, task, took / 1_000_000).applyOn(context);
                }
            }
            flush();
            if (step.metricsDue(now)) {
                publish();
            }
        }
    }

    private void executeFrame(byte[] data, int start, int end) throws IOException {
        int src = Frames.u32(data, start + Frames.HEADER_SIZE);
        int stream = Frames.u16(data, start + Frames.HEADER_SIZE + 4);
        String source = plan.taskComponent.get(src);
        if (source == null || stream >= plan.streams.size()) {
            malformed("data frame (from task " + src + ", stream #" + stream + ")", "unknown task or stream");
            return;
        }
        String streamName = plan.streams.get(stream)[1];
        List<Record> records;
        try {
            records = codec.decode(data, start + Frames.DATA_HEADER_SIZE, end - start - Frames.DATA_HEADER_SIZE);
        } catch (RuntimeException e) {
            malformed("data frame (from task " + src + ", stream #" + stream + ")", e.toString());
            return;
        }
        boolean hooked = boltOut.hooked != null;
        boltStep.runFrame(records, r -> {
            HbTuple input = new HbTuple(context, r.values, source, src, streamName, r.root, r.edge, r.pairs);
            if (r.unreadable != null) {
                unreadable(input, r.unreadable);
            } else if (hooked) {
                long began = System.nanoTime();
                bolt.execute(input);
                new BoltExecuteInfo(input, task, (System.nanoTime() - began) / 1_000_000).applyOn(context);
            } else {
                bolt.execute(input);
            }
        }, this::flushNow);
    }

    /** flush(), for a step's Runnable: a lost link ends the task as it would from the loop. */
    private void flushNow() {
        try {
            flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A tuple with a value this task's Kryo could not read (a class missing from its
     * classpath, a registration the sender's Kryo had): the component never sees it; the
     * error is reported as the component's own would be, and the tuple is failed, so its
     * spout hears of it at once instead of at a timeout.
     */
    private void unreadable(HbTuple input, String why) {
        emitter.reportError(new HostError(loc() + ": a tuple from task " + input.getSourceTask() + " of component '"
            + input.getSourceComponent() + "' on stream '" + input.getSourceStreamId() + "' was not executed: " + why));
        boltOut.fail(input);
    }

    // -- shared -----------------------------------------------------------------------

    private void malformed(String what, String why) {
        System.err.println(loc() + ": skipped a malformed " + what + " from the stream manager (" + why + ")");
    }

    private void control(byte[] data, int start, int end) {
        Message msg;
        try {
            msg = Frames.parseControl(data, start, end);
        } catch (InvalidProtocolBufferException e) {
            malformed("control frame", e.toString());
            return;
        }
        if (msg instanceof Control.TopologyStateChange && spout != null) {
            spoutStep.state(((Control.TopologyStateChange) msg).getState() == TopologyOuterClass.TopologyState.RUNNING,
                seconds());
        }
    }

    void flush() throws IOException {
        List<byte[]> out = emitter.frames();
        if (!out.isEmpty()) {
            link.send(out);
        }
    }

    /** Send what was already emitted and acked before the task dies. */
    /** A component that could not be made or configured: what it died of, to the metrics manager (the executor's wait and the CLI say it). */
    private void diedBeforeStart(Throwable e) {
        if (metrics == null) {
            return;
        }
        ExceptionLog died = new ExceptionLog();
        died.add(e);
        metrics.publish(Control.TaskMetrics.newBuilder().setComponent(component).setTaskId(task)
            .setContainer(container).setTimestampMs(System.currentTimeMillis()).setIncarnation(incarnation)
            .putCounters("error-count", 1).addAllExceptions(died.all()).build());
        metrics.close();
    }

    private void salvage() {
        if (link == null || emitter == null) {
            return;
        }
        try {
            flush();
            publish();
        } catch (IOException | RuntimeException ignored) {
            // dying anyway; the log has the cause
        }
    }

    void finish() throws IOException {
        flush();
        publish();
        System.err.println(loc() + ": stopped");
    }

    void publish() {
        if (metrics == null || emitter == null) {
            return;
        }
        Map<String, Double> counters = new HashMap<>();
        for (String zero : new String[] {"next-tuple-count", "execute-count", "execute-time-ns", "timeout-count"}) {
            counters.put(zero, 0.0);  // every task says each, as the Python step's counters do
        }
        counters.put("error-count", (double) (errorCount + emitter.errorsReported));
        counters.put("emit-count", (double) emitter.emitted);
        Control.TaskMetrics.Builder m = Control.TaskMetrics.newBuilder().setComponent(component).setTaskId(task)
            .setContainer(container).setTimestampMs(System.currentTimeMillis()).setIncarnation(incarnation)
            .putGauges("out-queue-bytes", 0).putGauges("rss-bytes", rssBytes());
        double blockedMs = link.blockedNanos / 1e6;
        if (spoutStep != null) {
            SpoutStep step = spoutStep;
            counters.put("next-tuple-count", (double) step.nextTupleCount);
            counters.put("ack-count", (double) step.ackCount);
            counters.put("fail-count", (double) step.failCount);
            counters.put("timeout-count", (double) step.timeoutCount);
            counters.put("window-held-ms", step.heldMs);
            blockedMs += step.blockedMs;
            m.putGauges("pending", pending());
            if (step.window.limit != Double.POSITIVE_INFINITY) {
                m.putGauges("window-limit", step.window.limit);
            }
            Control.Histogram.Builder h = Control.Histogram.newBuilder();
            for (long c : step.latency.counts) {
                h.addCounts(c);
            }
            m.putHistograms("complete-latency", h.build());
        } else if (boltOut != null) {
            counters.put("ack-count", (double) boltOut.acked);
            counters.put("fail-count", (double) boltOut.failed);
            if (boltStep != null) {
                counters.put("execute-count", (double) boltStep.executeCount);
                counters.put("execute-time-ns", (double) boltStep.executeNanos);
                blockedMs += boltStep.blockedMs;
            }
        }
        counters.put("backpressure-ms", blockedMs);
        m.putAllCounters(counters);
        m.addAllExceptions(emitter.exceptions.all());
        metrics.publish(m.build());
    }

    static double rssBytes() {
        try {
            String[] statm = Files.readString(Path.of("/proc/self/statm")).trim().split("\\s+");
            return Long.parseLong(statm[1]) * 4096.0;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    public void stop() {
        stopping = true;
    }
}
