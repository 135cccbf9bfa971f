package heronbridge.jvm.task;

/** Log-scale latency histogram, 4 buckets per power of two of microseconds (telemetry.Histogram). */
final class Histogram {
    static final int BUCKETS = 4 * 32;
    final long[] counts = new long[BUCKETS];

    void add(double seconds) {
        double us = seconds * 1e6;
        int b = us > 1 ? (int) (Math.log(us) / Math.log(2) * 4) : 0;
        counts[Math.min(b, BUCKETS - 1)]++;
    }
}
