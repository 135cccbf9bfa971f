package heronbridge.jvm.task;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;

/**
 * A bolt's step (runtime/instance/bolt_step.py): each data frame executed as one batch,
 * its output flushed after it and every execute.batch.time within a long one, tick tuples
 * on time, backpressure, counters and the metrics cadence.
 */
final class BoltStep extends Step {
    static final int EXECUTE_CHECK = 16;  // a long batch looks at the clock after this many tuples

    final DoubleSupplier clock;
    final double freq;  // the tick period (0: none)
    final double executeBatchSecs;
    double nextTick;
    boolean reading = true;  // whether the loop may read input this turn
    long ticks;
    long executeCount;
    long executeNanos;

    BoltStep(Settings s, DoubleSupplier clock) {
        super(s.metricsIntervalSecs, s.bpHighBytes, s.bpLowBytes, clock.getAsDouble());
        this.clock = clock;
        freq = s.tickFreqSecs != null ? s.tickFreqSecs : 0;
        executeBatchSecs = s.executeBatchSecs;
        nextTick = freq > 0 ? clock.getAsDouble() + freq : Double.POSITIVE_INFINITY;
    }

    /** How long the loop may wait for input; {@link #reading} says whether it may read it. */
    double waitFor(double now, long unsent) {
        reading = !backpressured(unsent, now);
        return Math.max(0, Math.min(MAX_WAIT, Math.min(nextTick, nextMetrics) - now));
    }

    /** Whether a tick tuple is due at `now` (the next is then a period on, or after `now` when late). */
    boolean tickDue(double now) {
        if (now < nextTick) {
            return false;
        }
        nextTick += freq;
        if (nextTick < now) {
            nextTick = now + freq;
        }
        ticks++;
        return true;
    }

    /**
     * One data frame's tuples through `execute`, then their output out through `flush`;
     * within a long batch, every execute.batch.time, so the tuples at its head are not
     * held back until its tail is done.
     */
    <T> void runFrame(List<T> batch, Consumer<T> execute, Runnable flush) {
        long t0 = System.nanoTime();
        int n = 0;
        try {
            if (batch.size() <= EXECUTE_CHECK) {
                for (T tuple : batch) {
                    n++;
                    execute.accept(tuple);
                }
            } else {
                double mark = clock.getAsDouble();
                for (T tuple : batch) {
                    n++;
                    execute.accept(tuple);
                    if (n % EXECUTE_CHECK == 0 || n == batch.size()) {
                        double now = clock.getAsDouble();
                        if (now - mark >= executeBatchSecs) {
                            flush.run();
                            mark = now;
                        }
                    }
                }
            }
        } finally {
            executeNanos += System.nanoTime() - t0;
            executeCount += n;
        }
        flush.run();
    }

    /** Tuples run outside a frame (a tick): counted as executed. */
    void ran(int tuples, long nanos) {
        executeCount += tuples;
        executeNanos += nanos;
    }
}
