package heronbridge.jvm.trace;

import heronbridge.jvm.HostError;
import heronbridge.jvm.values.JsonCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.Constants;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.tuple.Tuple;

/**
 * What the Python tracing hook (src/heronbridge/conformance/trace/hook.py) does for a
 * multilang task, done for one Java task from inside its JVM: the same records, block heads
 * and file, the run's bound on a spout, and the fail and drop faults on a bolt's input.
 * {@link TracedSpout} and {@link TracedBolt} feed it, on Storm and on the runtime alike.
 *
 * <p>A bolt's input tuple gets an id of its own (a count, as text), which its acks, fails
 * and the anchors of its emits name.
 */
final class Tracer {
    // tracefile.EVENTS, by code
    static final int START = 0, RECV = 1, EMIT = 2, ACK = 3, FAIL = 4, INJECTED_FAIL = 5, SPOUT_ACK = 6,
        SPOUT_FAIL = 7, ACTIVATE = 8, DEACTIVATE = 9, ERROR = 10, DROP = 11, EXIT = 12, STOP = 13;
    static final String[] EVENTS = {"start", "recv", "emit", "ack", "fail", "fail!", "spout_ack", "spout_fail",
        "activate", "deactivate", "error", "drop", "exit", "stop"};
    static final String TRACE_DIR = "heronbridge.conformance.trace.dir";
    static final String FAULTS = "heronbridge.conformance.faults";
    static final String BOUND = "heronbridge.conformance.bound";
    static final long FLUSH_MILLIS = 200;
    static final int BLOCK_ROWS = 4096;
    static final int PENDING_SHOWN = 5;

    private final Map<String, Object> options;
    private final boolean spout;
    private String component;
    private int task;
    private int index;
    private String where;
    private Path dir;
    private TraceWriter writer;
    private List<Object> rows = new ArrayList<>();
    private long seq;
    private final long[] totals = new long[EVENTS.length];
    private Double active;
    private Double firstEmit;
    private Double lastEmit;
    private final LinkedHashSet<String> pending = new LinkedHashSet<>();
    private final IdentityHashMap<Tuple, String> ids = new IdentityHashMap<>();
    private final java.util.Set<String> ticks = new java.util.HashSet<>();
    private long nextId;
    // A spout's msg ids that are no JSON value (storm-kafka-client's KafkaSpoutMessageId):
    // each traced as a number of its own, in the order first emitted (equal ids, as a
    // retry's, get the same number), as a Python spout's counter ids are.
    private final Map<Object, Long> opaqueIds = new java.util.HashMap<>();
    private long nextOpaque;
    private final List<Map<?, ?>> faults = new ArrayList<>();
    private long received;
    private Long limit;
    private Double seconds;
    private Double began;
    private long emitted;
    private boolean inNext;
    private Map<String, Object> stopped;
    private Thread flusher;

    /** `options`: JSON text of {trace dir, faults, bound}, the topology options the hook reads. */
    @SuppressWarnings("unchecked")
    Tracer(String options, boolean spout) {
        Object parsed = JSONValue.parse(options == null || options.isEmpty() ? "{}" : options);
        if (!(parsed instanceof Map)) {
            throw new HostError("the tracing wrapper: expected its options as a JSON object, received " + options);
        }
        this.options = (Map<String, Object>) parsed;
        this.spout = spout;
    }

    static double now() {
        Instant t = Instant.now();
        return t.getEpochSecond() + t.getNano() / 1e9;
    }

    /** At open/prepare, before the component's own: the file, its head and the start record. */
    @SuppressWarnings("unchecked")
    synchronized void start(Map<String, Object> conf, TopologyContext context) {
        component = context.getThisComponentId();
        task = context.getThisTaskId();
        index = context.getThisTaskIndex();
        Object topology = conf.get("topology.name");
        where = (topology != null ? "topology '" + topology + "', " : "") + "component '" + component + "', task "
            + task + " (tracing wrapper)";
        for (Object f : (List<Object>) options.getOrDefault(FAULTS, List.of())) {
            Map<?, ?> fault = (Map<?, ?>) f;
            Object at = fault.get("task_index");
            if (!component.equals(fault.get("component")) || at != null && ((Number) at).intValue() != index) {
                continue;
            }
            if (spout || !"fail".equals(fault.get("kind")) && !"drop".equals(fault.get("kind"))) {
                throw new HostError(where + ": expected a fail or drop fault on a bolt's input, received " + fault
                    + " (an exit fault would end the whole JVM, which on Storm's local mode is every task)");
            }
            faults.add(fault);
        }
        if (spout) {
            bound((Map<String, Object>) options.getOrDefault(BOUND, Map.of()));
        }
        Object traceDir = options.get(TRACE_DIR);
        if (traceDir == null) {
            return;
        }
        dir = Path.of(traceDir.toString());
        TreeMap<String, List<Integer>> tasks = new TreeMap<>();
        for (Map.Entry<Integer, String> e : context.getTaskToComponent().entrySet()) {
            tasks.computeIfAbsent(e.getValue(), k -> new ArrayList<>()).add(e.getKey());
        }
        tasks.values().forEach(l -> l.sort(null));
        long pid = ProcessHandle.current().pid();
        double t = now();
        Map<String, Object> head = new LinkedHashMap<>();
        head.put("component", component);
        head.put("task", task);
        head.put("pid", pid);
        head.put("t", t);
        head.put("spout", spout);
        head.put("topology", topology);
        head.put("tasks", tasks);
        try {
            Files.createDirectories(dir);
            writer = new TraceWriter(dir.resolve(component + "-" + task + "-" + pid + ".trace"), head);
        } catch (IOException e) {
            throw new UncheckedIOException(where + ": cannot open its trace file in " + dir, e);
        }
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("pid", pid);
        extra.put("tasks", tasks);
        rows.add(Arrays.asList(t, START, null, null, null, null, null, null, null, null, null, extra));
        active = t;
        flusher = new Thread(this::flushEvery, "trace-flush-" + task);
        flusher.setDaemon(true);
        flusher.start();
        Runtime.getRuntime().addShutdownHook(new Thread(this::close));
    }

    @SuppressWarnings("unchecked")
    private void bound(Map<String, Object> bound) {
        Object counts = bound.get("counts") instanceof Map ? ((Map<String, Object>) bound.get("counts")).get(component)
            : null;
        if (counts instanceof List && index < ((List<?>) counts).size() && ((List<?>) counts).get(index) != null) {
            limit = ((Number) ((List<?>) counts).get(index)).longValue();
        } else if (bound.get("tuples") != null) {
            limit = ((Number) bound.get("tuples")).longValue();
        }
        if (bound.get("seconds") != null && counts == null) {
            seconds = ((Number) bound.get("seconds")).doubleValue();
        }
    }

    private void flushEvery() {
        while (true) {
            try {
                Thread.sleep(FLUSH_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (this) {
                if (writer == null) {
                    return;
                }
                flush();
            }
        }
    }

    private void add(List<Object> row) {
        if (writer != null) {
            rows.add(row);
            if (rows.size() >= BLOCK_ROWS) {
                flush();
            }
        }
    }

    // -- spouts ------------------------------------------------------------------------

    /** Before a nextTuple: false once the run's bound has stopped this spout. */
    synchronized boolean next() {
        if (stopped == null && (limit != null || seconds != null)) {
            double t = now();
            if (began == null) {
                began = t;
            }
            String reason = limit != null && emitted >= limit ? "tuples"
                : seconds != null && t - began >= seconds ? "seconds" : null;
            if (reason != null) {
                stopped = new LinkedHashMap<>();
                stopped.put("emits", emitted);
                stopped.put("reason", reason);
                add(Arrays.asList(t, STOP, null, null, null, null, null, null, null, null, reason,
                    Map.of("emits", emitted)));
                active = t;
            }
        }
        inNext = stopped == null;
        return inNext;
    }

    /** A msg id as the trace shows it: itself, or the number given to an opaque one. */
    private byte[] traced(Object msgId) {
        if (!opaqueIds.isEmpty() && opaqueIds.containsKey(msgId)) {
            return JsonCodec.canonical(opaqueIds.get(msgId));
        }
        try {
            return JsonCodec.canonical(msgId);
        } catch (heronbridge.jvm.values.Codec.BadValue e) {
            Long number = ++nextOpaque;
            opaqueIds.put(msgId, number);
            return JsonCodec.canonical(number);
        }
    }

    synchronized void nextDone() {
        inNext = false;
    }

    synchronized void spoutCallback(boolean acked, Object msgId) {
        String id = new String(traced(msgId), StandardCharsets.UTF_8);
        if (acked) {
            opaqueIds.remove(msgId);
        }
        pending.remove(id);
        double t = now();
        add(Arrays.asList(t, acked ? SPOUT_ACK : SPOUT_FAIL, id.getBytes(StandardCharsets.UTF_8)));
        active = t;
    }

    synchronized void activation(boolean on) {
        double t = now();
        add(Arrays.asList(t, on ? ACTIVATE : DEACTIVATE));
        active = t;
        if (!on) {
            flush();
        }
    }

    // -- bolts -------------------------------------------------------------------------

    /** A bolt's input: true when the component gets it, false when a fault took it. */
    synchronized boolean receive(Tuple tuple, Runnable fail) {
        String id = Long.toString(nextId++);
        ids.put(tuple, id);
        double t = now();
        String src = tuple.getSourceComponent();
        String stream = tuple.getSourceStreamId();
        add(Arrays.asList(t, RECV, id, stream, JsonCodec.canonicalValues(tuple.getValues()), src, tuple.getSourceTask()));
        if (Constants.SYSTEM_COMPONENT_ID.equals(src) && Constants.SYSTEM_TICK_STREAM_ID.equals(stream)) {
            ticks.add(id);
            return true;
        }
        active = t;
        received++;
        for (Map<?, ?> fault : faults) {
            if (received % ((Number) fault.get("every")).longValue() != 0) {
                continue;
            }
            ids.remove(tuple);
            if ("fail".equals(fault.get("kind"))) {
                add(Arrays.asList(t, INJECTED_FAIL, id));
                fail.run();
            } else {
                add(Arrays.asList(t, DROP, id));
            }
            return false;
        }
        return true;
    }

    synchronized void ackOrFail(Tuple tuple, boolean acked) {
        String id = ids.remove(tuple);
        if (id == null) {
            return;  // not one this task received (or one a fault took)
        }
        double t = now();
        add(Arrays.asList(t, acked ? ACK : FAIL, id));
        if (!ticks.remove(id)) {
            active = t;
        }
    }

    synchronized void error(Throwable error) {
        double t = now();
        add(Arrays.asList(t, ERROR, null, null, null, null, null, null, null, null, String.valueOf(error)));
        active = t;
        flush();
    }

    // -- both --------------------------------------------------------------------------

    /**
     * An emit: `msgId` a spout's (or null), `anchors` a bolt's input tuples, `direct` the task
     * of an emitDirect (its targets then null).
     */
    synchronized void emit(String stream, List<Object> values, Object msgId, Collection<Tuple> anchors,
                           Integer direct, List<Integer> targets) {
        double t = now();
        byte[] id = null;
        if (msgId != null) {
            id = traced(msgId);
            if (spout) {
                pending.add(new String(id, StandardCharsets.UTF_8));
            }
        }
        List<String> anchorIds = new ArrayList<>();
        if (anchors != null) {
            for (Tuple a : anchors) {
                String known = ids.get(a);
                if (known != null) {
                    anchorIds.add(known);
                }
            }
        }
        active = lastEmit = t;
        if (firstEmit == null) {
            firstEmit = t;
        }
        if (inNext) {
            emitted++;
        }
        List<Object> row = new ArrayList<>(Arrays.asList(t, EMIT, id, stream == null ? "default" : stream,
            JsonCodec.canonicalValues(values), null, null, anchorIds, direct));
        if (direct == null) {
            row.add(targets == null ? List.of() : new ArrayList<>(targets));
        }
        add(row);
    }

    synchronized void close() {
        if (writer == null) {
            return;
        }
        flush();
        try {
            writer.close();
        } catch (IOException e) {
            // the JVM is going: nothing to tell
        }
        writer = null;
    }

    private void flush() {
        if (writer == null || rows.isEmpty()) {
            return;
        }
        List<Object> out = rows;
        rows = new ArrayList<>();
        for (Object r : out) {
            totals[(Integer) ((List<?>) r).get(1)]++;
        }
        Map<String, Object> head = new LinkedHashMap<>();
        head.put("n", out.size());
        head.put("seq", seq);
        head.put("t1", ((List<?>) out.get(out.size() - 1)).get(0));
        head.put("active", active);
        Map<String, Long> counted = new LinkedHashMap<>();
        for (int i = 0; i < EVENTS.length; i++) {
            if (totals[i] > 0) {
                counted.put(EVENTS[i], totals[i]);
            }
        }
        head.put("totals", counted);
        head.put("pending", pending.size());
        head.put("pending_ids", pending.stream().limit(PENDING_SHOWN).toList());
        head.put("first_emit", firstEmit);
        head.put("last_emit", lastEmit);
        head.put("emitted", emitted);
        head.put("stopped", stopped);
        seq += out.size();
        try {
            writer.block(head, out);
        } catch (IOException e) {
            throw new UncheckedIOException(where + ": cannot write its trace file in " + dir, e);
        }
    }
}
