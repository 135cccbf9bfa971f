package heronbridge.jvm.task;

import heronbridge.jvm.wire.Frames;
import java.util.ArrayList;
import java.util.List;

/**
 * A spout's step (runtime/instance/spout_step.py): bursts of nextTuple bounded by calls,
 * time, bytes and the in-flight window, pacing, backpressure, at-most-once acks, what
 * completed trees tell the spout, activation, counters and the time the window held it.
 *
 * <p>A turn: {@link #waitFor} (how long to wait for input: 0 when a burst may begin), the
 * read, {@link #settled} for each tree that came back, then {@link #begin} and, after each
 * nextTuple, {@link #returned}, which says whether the burst goes on.
 */
final class SpoutStep extends Step {
    static final double IDLE_WAIT = 0.001;  // a spout with nothing to emit waits this long for acks (Storm: 1 ms)
    static final double SLOW_IDLE = 0.001;
    static final double EAGER_SECS = 0.05;
    static final double MAX_ACK_WAIT = 0.01;
    static final int LATENCY_SAMPLES = 64;

    /** What the step calls on the spout (latencies in ms for Storm's hooks; null: none). */
    interface Calls {
        void ack(Object msgId, Long latencyMs);

        void fail(Object msgId, Long latencyMs);

        void activate();

        void deactivate();
    }

    /** A tree that came back: its message id and when it was emitted (seconds). */
    record Settled(Object msgId, double emittedAt) {
    }

    /** When a spout's task calls it (pacing.py): bursts, and the waits after idle calls. */
    static final class Pacer {
        final int burst;  // nextTuple calls in one burst, at most
        final double burstSecs;
        final long burstBytes;
        double eagerUntil;  // until then, a burst ends at each emit
        double acksUntil;  // until then, in-flight trees are waited for

        Pacer(int burst, double burstSecs, long burstBytes) {
            this.burst = burst;
            this.burstSecs = burstSecs;
            this.burstBytes = burstBytes;
        }

        void idle(double called, double now) {
            double took = now - called;
            if (took > SLOW_IDLE) {
                eagerUntil = now + EAGER_SECS;
                acksUntil = now + Math.min(took, MAX_ACK_WAIT);
            }
        }
    }

    /** The burst under way, and how the last one ended. */
    static final class Burst {
        boolean ready;  // the turn's wait allows a burst once what came is read
        boolean idle;  // the last call emitted nothing: wait a little before the next
        int calls;
        double began;
        double before;  // when the last call began
        long emitted;  // the collector's emits before the last call
        long most;  // the emit count that ends it
    }

    final Calls spout;
    final InFlightWindow window;
    final Pacer pacer;
    final Burst burst = new Burst();
    final Histogram latency = new Histogram();
    boolean active;
    double heldMs;
    double heldAt = Double.NaN;  // when the window was last seen full (NaN: it was not)
    long nextTupleCount;
    long ackCount;
    long failCount;
    long timeoutCount;

    SpoutStep(Calls spout, Settings s, double now) {
        super(s.metricsIntervalSecs, s.bpHighBytes, s.bpLowBytes, now);
        this.spout = spout;
        window = new InFlightWindow(s.maxSpoutPending, s.acking(), s.latencyTargetSecs);
        pacer = new Pacer(s.spoutBurst, s.emitBatchSecs, s.emitBatchBytes);
    }

    /** The topology's state: a spout runs while it is RUNNING. */
    void state(boolean running, double now) {
        if (running && !active) {
            active = true;
            pacer.eagerUntil = now + EAGER_SECS;
            spout.activate();
        } else if (!running && active) {
            active = false;
            spout.deactivate();
        }
    }

    /** How long the loop may wait for input before this turn's burst (0: none). */
    double waitFor(double now, int pending, List<Object> ackNow, long unsent) {
        if (!ackNow.isEmpty()) {
            ackEmitted(ackNow);
        }
        double limit = window.limit;
        boolean full = pending >= (Double.isNaN(heldAt) ? limit : window.resumeBelow(pacer.burst));
        if (full) {
            window.stalled(now);
            if (window.limit != limit) {  // it doubled: room now, perhaps
                full = pending >= window.resumeBelow(pacer.burst);
            }
        }
        if (!Double.isNaN(heldAt)) {
            heldMs += (now - heldAt) * 1000;
        }
        heldAt = full ? now : Double.NaN;
        if (!active || full || backpressured(unsent, now)) {
            burst.ready = false;
            return Math.max(0, Math.min(MAX_WAIT, nextMetrics - now));
        }
        if (pending > 0 && now < pacer.acksUntil) {
            burst.ready = false;
            return pacer.acksUntil - now;
        }
        burst.ready = true;
        return burst.idle ? IDLE_WAIT : 0;
    }

    /** Whether a burst begins now (the turn's wait allowed one, and the spout is active with room in its window). */
    boolean begin(double now, int pending, long emitted, double bytesPerEmit) {
        if (!burst.ready || !active || pending >= window.limit) {
            return false;
        }
        burst.ready = false;
        burst.idle = false;
        burst.calls = 0;
        burst.began = now;
        burst.before = now;
        burst.emitted = emitted;
        burst.most = emitted + Math.max(1, (long) (pacer.burstBytes / bytesPerEmit));
        return true;
    }

    /**
     * A nextTuple call of the burst returned at `now`: whether the burst goes on. It ends
     * when the call emitted nothing, the window filled, after the burst's calls,
     * emit.batch.time or about emit.batch.size.bytes of tuples, and at each emit while the
     * pacer is eager.
     */
    boolean returned(double now, int pending, long emitted, List<Object> ackNow) {
        nextTupleCount++;
        if (!ackNow.isEmpty()) {
            ackEmitted(ackNow);
        }
        if (emitted == burst.emitted) {
            pacer.idle(burst.before, now);
            burst.idle = true;
            return false;
        }
        burst.calls++;
        if (burst.calls >= pacer.burst || emitted >= burst.most || pending >= window.limit
                || now - burst.began > pacer.burstSecs || now < pacer.eagerUntil) {
            return false;
        }
        burst.emitted = emitted;
        burst.before = now;
        return true;
    }

    /** At-most-once: a message id is acked as soon as it is emitted. */
    void ackEmitted(List<Object> ackNow) {
        List<Object> acked = new ArrayList<>(ackNow);
        ackNow.clear();
        for (Object id : acked) {
            spout.ack(id, null);
        }
        ackCount += acked.size();
    }

    /**
     * Trees the stream manager settled (kind: Frames.ACKED, FAILED or EXPIRED), already
     * taken from the trees in flight, `pending` left: the spout's ack or fail, the counters,
     * the complete latency (from a sample) and the window (an ack, or a bolt's fail).
     */
    void settled(int kind, double now, List<Settled> entries, int pending) {
        if (kind == Frames.ACKED) {
            ackCount += entries.size();
            for (Settled e : entries) {
                spout.ack(e.msgId(), (long) ((now - e.emittedAt()) * 1000));
            }
            int step = Math.max(1, entries.size() / LATENCY_SAMPLES);
            double sumAt = 0;
            int n = 0;
            for (int j = 0; j < entries.size(); j += step) {
                double at = entries.get(j).emittedAt();
                latency.add(now - at);
                sumAt += at;
                n++;
            }
            if (n > 0) {
                window.acked(now - sumAt / n, pending + entries.size(), now);
            }
            return;
        }
        if (kind == Frames.FAILED) {
            failCount += entries.size();
            if (!entries.isEmpty()) {  // a bolt's answer: a round trip too
                window.acked(now - entries.get(entries.size() - 1).emittedAt(), pending + entries.size(), now);
            }
        } else {
            timeoutCount += entries.size();
        }
        for (Settled e : entries) {
            spout.fail(e.msgId(), (long) ((now - e.emittedAt()) * 1000));
        }
    }

    /** When this step next has something to do with no input: metrics, a full window's next doubling, the end of a wait for acks. */
    double due(double now, int pending) {
        double at = nextMetrics;
        if (!Double.isNaN(heldAt) && window.adaptive && window.heard >= 0) {
            at = Math.min(at, window.heard + InFlightWindow.STALL_SECS);
        }
        if (pacer.acksUntil > now && pending > 0) {
            at = Math.min(at, pacer.acksUntil);
        }
        return at;
    }
}
