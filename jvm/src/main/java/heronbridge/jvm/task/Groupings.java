package heronbridge.jvm.task;

import com.google.protobuf.Message;
import heronbridge.jvm.HostError;
import heronbridge.jvm.plan.Plan;
import heronbridge.jvm.plan.StormView;
import heronbridge.jvm.values.Codec;
import heronbridge.jvm.values.Record;
import heronbridge.jvm.wire.Frames;
import heronbridge.jvm.wire.Identity;
import heronbridge.jvm.wire.Link;
import heronbridge.runtime.Control;
import heronbridge.runtime.Plans;
import heronbridge.runtime.TopologyOuterClass.InputDecl;
import heronbridge.runtime.TopologyOuterClass.StreamDecl;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.grouping.CustomStreamGrouping;
import org.apache.storm.task.WorkerTopologyContext;

/**
 * The Java custom groupings of a task that is not Java (a Python component, a multilang
 * subprocess), in a JVM beside it, as Storm runs them in a ShellBolt's worker: made from
 * their specs, prepared once with the worker's context, then asked chooseTasks per emit
 * over the task's grouping link (runtime/instance/java_groupings.py has the exchange).
 */
public final class Groupings {
    public static final String ROLE = "grouping";
    static final long REGISTER_MILLIS = 60_000;

    final String topologyId;
    final int task;
    final int container;
    final String codeDir;
    final Link link;
    String where;
    Plan plan;
    Codec codec;
    /** By (stream index, the subscriber's lowest task): what a data frame from the task names. */
    final Map<Long, Route> routes = new HashMap<>();

    static final class Route {
        final CustomStreamGrouping grouper;
        final String where;

        Route(CustomStreamGrouping grouper, String where) {
            this.grouper = grouper;
            this.where = where;
        }
    }

    public Groupings(String topologyId, int task, int container, String listener, String codeDir, byte[] key)
            throws IOException {
        this.topologyId = topologyId;
        this.task = task;
        this.container = container;
        this.codeDir = codeDir;
        this.where = "task " + task;
        link = Link.dial(Identity.unix(topologyId, "grouping-" + task, listener), key, ROLE, true);
    }

    /** Serve until the task closes the link; returns the process's exit code. */
    public int run() throws IOException, InterruptedException {
        link.send(List.of(Frames.controlFrame(Control.RegisterInstanceRequest.newBuilder().setTopologyId(topologyId)
            .setTaskId(task).setPid((int) ProcessHandle.current().pid()).build(), 0)));
        Plans.PhysicalPlan pplan = awaitPlan();
        try {
            prepare(pplan);
        } catch (RuntimeException | LinkageError e) {
            String why = e instanceof HostError ? e.getMessage() : where + ": preparing its Java custom groupings raised "
                + trace(e);
            link.send(List.of(status(false, why)));
            System.err.println(why);
            return 1;
        }
        link.send(List.of(status(true, "")));
        while (true) {
            Link.Batch batch = link.poll(1000);
            if (batch == null) {
                continue;
            }
            if (batch.lost != null) {
                return 0;  // the task closed the link, or its process ended: so do we
            }
            List<byte[]> out = new ArrayList<>(batch.count);
            for (int i = 0; i < batch.count; i++) {
                out.add(choose(batch.data, batch.offsets[2 * i], batch.offsets[2 * i + 1]));
            }
            link.send(out);
        }
    }

    private Plans.PhysicalPlan awaitPlan() throws InterruptedException {
        long deadline = System.currentTimeMillis() + REGISTER_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            Link.Batch batch = link.poll(200);
            if (batch == null) {
                continue;
            }
            if (batch.lost != null) {
                throw new HostError(where + ": the task closed its grouping link before sending its plan");
            }
            for (int i = 0; i < batch.count; i++) {
                int start = batch.offsets[2 * i];
                if (Frames.kind(batch.data, start) == Frames.CONTROL) {
                    Message msg;
                    try {
                        msg = Frames.parseControl(batch.data, start, batch.offsets[2 * i + 1]);
                    } catch (IOException e) {
                        throw new HostError(where + ": expected the task's plan, received a malformed control frame");
                    }
                    if (msg instanceof Control.RegisterInstanceResponse) {
                        return ((Control.RegisterInstanceResponse) msg).getPplan();
                    }
                }
            }
        }
        throw new HostError(where + ": expected the task's plan within " + REGISTER_MILLIS / 1000 + "s, received none");
    }

    /** Make every Java custom grouping on the task's streams and prepare it, as Storm's worker does. */
    void prepare(Plans.PhysicalPlan pplan) throws IOException {
        plan = new Plan(pplan.getTopology());
        String component = plan.taskComponent.get(task);
        where = HostError.where(plan.name, component, task);
        String mine = null;
        for (Plans.InstanceInfo i : pplan.getInstancesList()) {
            if (i.getTaskId() == task) {
                mine = i.getStmgrId();
            }
        }
        List<Integer> local = new ArrayList<>();
        for (Plans.InstanceInfo i : pplan.getInstancesList()) {
            if (i.getStmgrId().equals(mine)) {
                local.add(i.getTaskId());
            }
        }
        local.sort(null);
        StormView view = new StormView(plan, task, container, local, codeDir,
            Files.createTempDirectory("heronbridge-pids-").toString());
        Map<String, Object> conf = view.conf(component, null);
        try {
            codec = Codec.named(new Settings(conf, where).serializer);
        } catch (IllegalArgumentException e) {
            throw new HostError(where + ": config 'heronbridge.serializer' " + e.getMessage());
        }
        WorkerTopologyContext worker = view.workerContext(conf);
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        for (StreamDecl s : plan.components.get(component).getOutputsList()) {
            for (Map.Entry<String, InputDecl> sub : plan.subscribers(component, s.getName())) {
                InputDecl in = sub.getValue();
                if (!in.getCustom().trim().startsWith("{")) {
                    continue;  // not a Java object: the task routes it itself
                }
                String at = where + ", stream '" + s.getName() + "' to '" + sub.getKey() + "'";
                List<Integer> targets = plan.componentTasks.get(sub.getKey());
                CustomStreamGrouping g = Emitter.custom(in, loader, at);
                try {
                    g.prepare(worker, new GlobalStreamId(component, s.getName()), new ArrayList<>(targets));
                } catch (RuntimeException | LinkageError e) {
                    throw new HostError(at + ": the custom grouping " + g.getClass().getName() + "'s prepare raised "
                        + trace(e), e);
                }
                long key = (long) plan.streamIndex(component, s.getName()) << 32 | targets.get(0);
                routes.put(key, new Route(g, at + ", custom grouping " + g.getClass().getName()));
            }
        }
    }

    /** The reply to one frame from the task: the tasks chosen for its record, or why there are none. */
    byte[] choose(byte[] buf, int start, int end) {
        if (Frames.kind(buf, start) != Frames.DATA) {
            return status(false, where + ": expected a data frame on the grouping link, received a "
                + Frames.kindName(Frames.kind(buf, start)) + " frame");
        }
        int dest = Frames.u32(buf, start + 5);
        int stream = Frames.u16(buf, start + 13);
        Route route = routes.get((long) stream << 32 | dest);
        if (route == null) {
            return status(false, where + ": expected a stream with a Java custom grouping, received stream " + stream
                + " to task " + dest + ", which has none");
        }
        List<Object> values;
        try {
            List<Record> records = codec.decode(buf, start + Frames.DATA_HEADER_SIZE, end - start - Frames.DATA_HEADER_SIZE);
            if (records.size() != 1) {
                return status(false, route.where + ": expected one tuple's values, received " + records.size());
            }
            values = records.get(0).values;
        } catch (RuntimeException e) {
            return status(false, route.where + ": expected one tuple's values, received what its codec refused: " + e);
        }
        List<Integer> chosen;
        try {
            chosen = route.grouper.chooseTasks(task, values);
        } catch (RuntimeException | LinkageError e) {
            return status(false, route.where + ": chooseTasks raised " + trace(e) + " for values " + values);
        }
        boolean nulls = chosen == null;
        for (int i = 0; !nulls && i < chosen.size(); i++) {
            nulls = chosen.get(i) == null;  // not contains(null): List.of's throws
        }
        if (nulls) {
            return status(false, route.where + ": expected chooseTasks to return task ids, received " + chosen
                + " for values " + values);
        }
        Codec.Batch batch = codec.batch();
        batch.add(new ArrayList<Object>(chosen), 0, 0, null);
        byte[] records = batch.take();
        return Frames.dataFrame(task, dest, stream, records, records.length);
    }

    static byte[] status(boolean ok, String message) {
        return Frames.controlFrame(Control.Status.newBuilder().setOk(ok).setMessage(message).build(), 0);
    }

    static String trace(Throwable e) {
        StringWriter out = new StringWriter();
        e.printStackTrace(new PrintWriter(out));
        String text = out.toString();
        return text.length() > 4000 ? text.substring(0, 4000) + "..." : text;
    }

    public void close() {
        link.close();
    }
}
