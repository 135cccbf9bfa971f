package heronbridge.jvm.task;

import heronbridge.jvm.HostError;
import heronbridge.jvm.plan.Plan;
import heronbridge.jvm.values.Codec;
import heronbridge.jvm.values.Record;
import heronbridge.jvm.wire.Frames;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.hooks.info.BoltAckInfo;
import org.apache.storm.hooks.info.BoltFailInfo;
import org.apache.storm.task.IOutputCollector;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.tuple.Tuple;

/**
 * The bolt's collector (Storm's IOutputCollector): anchored emits XOR a fresh edge into each
 * anchor; an ack sends, per root, the input's edge XOR the edges of what was emitted
 * anchored to it; the stream manager sees a root's value reach zero exactly when its whole
 * tree is acked (Storm's acker algorithm).
 */
public final class BoltCollector extends Emitter implements IOutputCollector {
    private long[] acks = new long[64];
    private int nacks;
    private long[] fails = new long[16];
    private int nfails;
    private long ackRoot;
    private long ackXor;
    long acked;
    long failed;

    BoltCollector(Plan plan, int task, Codec codec, boolean acking, WorkerTopologyContext worker,
                  Map<String, Object> conf, ClassLoader loader) {
        super(plan, task, codec, acking, worker, conf, loader);
    }

    @Override
    public List<Integer> emit(String streamId, Collection<Tuple> anchors, List<Object> tuple) {
        List<Integer> targets;
        synchronized (this) {
            OutStream out = check(streamId, tuple, null);
            targets = route(out, tuple);
            send(out, targets, anchors, tuple);
            fromElsewhere();
        }
        hookEmit(streamId, tuple, targets);
        return targets;
    }

    @Override
    public void emitDirect(int taskId, String streamId, Collection<Tuple> anchors, List<Object> tuple) {
        synchronized (this) {
            OutStream out = check(streamId, tuple, taskId);
            send(out, out.directTasks.containsKey(taskId) ? List.of(taskId) : Collections.emptyList(), anchors, tuple);
            fromElsewhere();
        }
        hookEmit(streamId, tuple, List.of(taskId));
    }

    private void send(OutStream out, List<Integer> targets, Collection<Tuple> anchors, List<Object> values) {
        Outgoing o = outgoing(out, targets, values);  // before anything changes: a refused value refuses it all
        emitted++;
        int n = targets.size();
        if (!acking || anchors == null || anchors.isEmpty()) {
            for (int i = 0; i < n; i++) {
                add(out.byTask.get(targets.get(i)), values, o, 0, 0, null);
            }
            return;
        }
        if (anchors.size() == 1) {
            Tuple only = anchors.iterator().next();
            if (only instanceof HbTuple && ((HbTuple) only).root > 0) {
                HbTuple a = (HbTuple) only;
                for (int i = 0; i < n; i++) {
                    long edge = edge();
                    a.edge ^= edge;
                    add(out.byTask.get(targets.get(i)), values, o, a.root, edge, null);
                }
                return;
            }
        }
        for (int i = 0; i < n; i++) {
            anchored(out.byTask.get(targets.get(i)), values, o, anchors);
        }
    }

    /** One copy of a tuple anchored to several inputs (or to one with several roots). */
    private void anchored(Buffer b, List<Object> values, Outgoing o, Collection<Tuple> anchors) {
        Map<Long, Long> edges = new LinkedHashMap<>();
        for (Tuple t : anchors) {
            if (!(t instanceof HbTuple)) {
                throw new HostError(loc() + ": expected anchors among the tuples this task received, received "
                    + t.getClass().getName() + " " + t);
            }
            HbTuple a = (HbTuple) t;
            if (a.root == 0) {
                continue;
            }
            long edge = edge();
            if (a.root > 0) {
                a.edge ^= edge;
                edges.merge(a.root, edge, (x, y) -> x ^ y);
            } else {
                a.pairs[0] ^= edge;
                for (int j = 1; j < a.pairs.length; j += 2) {
                    edges.merge(a.pairs[j], edge, (x, y) -> x ^ y);
                }
            }
        }
        if (edges.isEmpty()) {
            add(b, values, o, 0, 0, null);
        } else if (edges.size() == 1) {
            Map.Entry<Long, Long> e = edges.entrySet().iterator().next();
            add(b, values, o, e.getKey(), e.getValue(), null);
        } else {
            long[] pairs = new long[1 + 2 * edges.size()];
            int j = 1;
            for (Map.Entry<Long, Long> e : edges.entrySet()) {
                pairs[j++] = e.getKey();
                pairs[j++] = e.getValue();
            }
            add(b, values, o, Record.MULTI, 0, pairs);
        }
    }

    @Override
    public void ack(Tuple input) {
        if (hooked != null) {
            new BoltAckInfo(input, task, null).applyOn(hooked);
        }
        synchronized (this) {
            acked++;
            if (!(input instanceof HbTuple)) {
                return;
            }
            HbTuple t = (HbTuple) input;
            long root = t.root;
            if (root > 0) {
                t.root = 0;  // a second ack must not cancel the first
                if (root == ackRoot) {
                    ackXor ^= t.edge;
                } else {
                    if (ackRoot != 0) {
                        pushAck(ackRoot, ackXor);
                    }
                    ackRoot = root;
                    ackXor = t.edge;
                }
            } else if (root == Record.MULTI) {
                t.root = 0;
                long acc = t.pairs[0];
                for (int j = 1; j < t.pairs.length; j += 2) {
                    pushAck(t.pairs[j], t.pairs[j + 1] ^ acc);
                }
            }
            fromElsewhere();
        }
    }

    private void pushAck(long root, long value) {
        if (nacks + 2 > acks.length) {
            acks = Arrays.copyOf(acks, acks.length * 2);
        }
        acks[nacks++] = root;
        acks[nacks++] = value;
    }

    @Override
    public void fail(Tuple input) {
        if (hooked != null) {
            new BoltFailInfo(input, task, null).applyOn(hooked);
        }
        synchronized (this) {
            failed++;
            if (!(input instanceof HbTuple)) {
                return;
            }
            HbTuple t = (HbTuple) input;
            if (t.root > 0) {
                pushFail(t.root);
            } else if (t.root == Record.MULTI) {
                for (int j = 1; j < t.pairs.length; j += 2) {
                    pushFail(t.pairs[j]);
                }
            }
            t.root = 0;
            fromElsewhere();
        }
    }

    private void pushFail(long root) {
        if (nfails + 1 > fails.length) {
            fails = Arrays.copyOf(fails, fails.length * 2);
        }
        fails[nfails++] = root;
    }

    /**
     * Storm's resetTimeout: a zero ack for each root of the tuple (the tree's value does not
     * change; the stream manager counts the root as alive again).
     */
    @Override
    public void resetTimeout(Tuple input) {
        synchronized (this) {
            if (input instanceof HbTuple) {
                HbTuple t = (HbTuple) input;
                if (t.root > 0) {
                    pushAck(t.root, 0);
                } else if (t.root == Record.MULTI) {
                    for (int j = 1; j < t.pairs.length; j += 2) {
                        pushAck(t.pairs[j], 0);
                    }
                }
            }
        }
    }

    @Override
    public void flush() {
        // The loop flushes after each input batch.
    }

    @Override
    void controlFrames(List<byte[]> out, boolean before) {
        if (before) {
            return;
        }
        if (ackRoot != 0) {
            pushAck(ackRoot, ackXor);
            ackRoot = 0;
        }
        if (nacks > 0) {
            out.add(Frames.intFrame(Frames.ACK, 0, acks, nacks));
            nacks = 0;
        }
        if (nfails > 0) {
            out.add(Frames.intFrame(Frames.FAIL, 0, fails, nfails));
            nfails = 0;
        }
    }
}
