package heronbridge.jvm.task;

/**
 * What a spout's and a bolt's step share (runtime/instance/step.py): backpressure on the
 * task's unsent output, and the metrics cadence. A step holds the task loop's policy and
 * state; Task.java moves the bytes and keeps the time, as the Python hosts do, and the
 * policy is checked against vectors the Python step writes (scripts/step_vectors.py).
 */
abstract class Step {
    static final double MAX_WAIT = 0.1;  // a loop wakes at least this often, to flush and publish

    final double metricsInterval;
    double nextMetrics;
    /** Backpressure: since when output was over the high watermark (NaN: it is not), and for how long in all. */
    final long highBytes;
    final long lowBytes;
    double blockedSince = Double.NaN;
    double blockedMs;

    Step(double metricsInterval, long highBytes, long lowBytes, double now) {
        this.metricsInterval = metricsInterval;
        this.highBytes = highBytes;
        this.lowBytes = lowBytes;
        nextMetrics = now + metricsInterval;
    }

    /** Hysteresis on unsent output: producing stops above the high watermark and resumes below the low one. */
    boolean backpressured(long unsent, double now) {
        if (Double.isNaN(blockedSince)) {
            if (unsent > highBytes) {
                blockedSince = now;
            }
        } else if (unsent <= lowBytes) {
            blockedMs += (now - blockedSince) * 1000;
            blockedSince = Double.NaN;
        }
        return !Double.isNaN(blockedSince);
    }

    /** The metrics cadence: whether a sample is due at a turn begun at `now`. */
    boolean metricsDue(double now) {
        if (now < nextMetrics) {
            return false;
        }
        nextMetrics = now + metricsInterval;
        return true;
    }
}
