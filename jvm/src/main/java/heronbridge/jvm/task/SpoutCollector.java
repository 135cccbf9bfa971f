package heronbridge.jvm.task;

import heronbridge.jvm.plan.Plan;
import heronbridge.jvm.values.Codec;
import heronbridge.jvm.wire.Frames;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.spout.ISpoutOutputCollector;
import org.apache.storm.task.WorkerTopologyContext;

/**
 * The spout's collector (Storm's ISpoutOutputCollector). A tracked emit picks a root (this
 * task's id in the high bits) and a random edge per copy, tells the stream manager the XOR
 * of the edges (an init, sent before the data), and remembers the message id until the
 * tree is acked, failed or expired.
 */
public final class SpoutCollector extends Emitter implements ISpoutOutputCollector {
    final Map<Long, Pending> pending = new HashMap<>();
    /** At-most-once: message ids acked as soon as emitted (as Storm without ackers). */
    final List<Object> ackNow = new ArrayList<>();
    private final long rootBase;
    private long seq;
    private long[] inits = new long[64];
    private int ninits;
    /** The loop's clock (nanoseconds), read once per burst of nextTuple calls. */
    long now;

    static final class Pending {
        final Object msgId;
        final long emittedAt;

        Pending(Object msgId, long emittedAt) {
            this.msgId = msgId;
            this.emittedAt = emittedAt;
        }
    }

    SpoutCollector(Plan plan, int task, Codec codec, boolean acking, WorkerTopologyContext worker,
                   Map<String, Object> conf, ClassLoader loader) {
        super(plan, task, codec, acking, worker, conf, loader);
        rootBase = (long) task << Frames.ROOT_TASK_SHIFT;
        // Each life of the task numbers its trees from a random point: acks still on their
        // way from a previous life find no tree of this one.
        seq = new SecureRandom().nextLong() & Frames.ROOT_SEQ_MASK;
    }

    @Override
    public List<Integer> emit(String streamId, List<Object> tuple, Object messageId) {
        List<Integer> to;
        synchronized (this) {
            OutStream out = check(streamId, tuple, null);
            to = send(out, route(out, tuple), tuple, messageId);
            fromElsewhere();
        }
        hookEmit(streamId, tuple, to);
        return to;
    }

    @Override
    public void emitDirect(int taskId, String streamId, List<Object> tuple, Object messageId) {
        synchronized (this) {
            OutStream out = check(streamId, tuple, taskId);
            Buffer b = out.directTasks.get(taskId);  // Storm drops a direct emit to a task that does not subscribe
            send(out, b == null ? Collections.emptyList() : List.of(taskId), tuple, messageId);
            fromElsewhere();
        }
        hookEmit(streamId, tuple, List.of(taskId));
    }

    private List<Integer> send(OutStream out, List<Integer> targets, List<Object> values, Object msgId) {
        Outgoing o = outgoing(out, targets, values);  // before anything changes: a refused value refuses it all
        emitted++;
        int n = targets.size();
        if (msgId == null || !acking) {
            for (int i = 0; i < n; i++) {
                add(out.byTask.get(targets.get(i)), values, o, 0, 0, null);
            }
            if (msgId != null) {
                ackNow.add(msgId);
            }
            return targets;
        }
        long root = rootBase | (seq++ & Frames.ROOT_SEQ_MASK);
        long xor = 0;
        for (int i = 0; i < n; i++) {
            long edge = edge();
            xor ^= edge;
            add(out.byTask.get(targets.get(i)), values, o, root, edge, null);
        }
        if (ninits + 2 > inits.length) {
            inits = Arrays.copyOf(inits, inits.length * 2);
        }
        inits[ninits++] = root;
        inits[ninits++] = xor;
        pending.put(root, new Pending(msgId, now));
        return targets;
    }

    @Override
    public long getPendingCount() {
        synchronized (this) {
            return pending.size();
        }
    }

    @Override
    public void flush() {
        // The loop flushes after each burst of nextTuple calls.
    }

    @Override
    void controlFrames(List<byte[]> out, boolean before) {
        // Inits first: the stream manager must know a root before any ack for it.
        if (before && ninits > 0) {
            out.add(Frames.intFrame(Frames.INIT, task, inits, ninits));
            ninits = 0;
        }
    }
}
