package heronbridge.jvm.task;

/**
 * How many tuple trees a spout may have in flight (runtime/instance/window.py):
 * topology.max.spout.pending when set; otherwise a limit that follows the complete latency
 * toward heronbridge.spout.latency.target.ms, starting at one tree and doubling while
 * nothing comes back. At-most-once has no limit.
 */
final class InFlightWindow {
    static final double MIN_LIMIT = 16;
    static final double SLOW_START = 2.0;
    static final double GROWTH = 1.05;
    static final double SMOOTHING = 0.25;
    static final double STALL_SECS = 1.0;

    final boolean adaptive;
    final double target;
    double latency;
    double growth = SLOW_START;
    double heard = -1;
    double limit;

    InFlightWindow(Integer maxPending, boolean acking, double targetSecs) {
        adaptive = acking && maxPending == null && targetSecs > 0;
        target = targetSecs;
        if (!acking) {
            limit = Double.POSITIVE_INFINITY;
        } else if (maxPending != null) {
            limit = maxPending;
        } else {
            limit = adaptive ? 1 : Double.POSITIVE_INFINITY;
        }
    }

    double resumeBelow(int burst) {
        if (limit == Double.POSITIVE_INFINITY) {
            return limit;
        }
        return Math.max(1.0, limit - Math.min(burst, Math.max(1, (int) limit / 4)));
    }

    void stalled(double now) {
        if (!adaptive) {
            return;
        }
        if (heard < 0) {
            heard = now;
        } else if (now - heard >= STALL_SECS) {
            heard = now;
            limit *= 2;
        }
    }

    void acked(double batchLatency, int inFlight, double now) {
        if (!adaptive) {
            return;
        }
        heard = now;
        latency = latency == 0 ? batchLatency : (1 - SMOOTHING) * latency + SMOOTHING * batchLatency;
        if (latency <= target) {
            limit = Math.max(limit, Math.min(limit * growth, 2.0 * inFlight));
        } else {
            growth = GROWTH;
            limit = Math.max(MIN_LIMIT, limit * target / latency);
        }
    }
}
