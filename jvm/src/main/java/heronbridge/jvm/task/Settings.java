package heronbridge.jvm.task;

import heronbridge.jvm.HostError;
import java.util.Map;

/** The runtime's config keys a task reads (runtime/config.py), with the same defaults. */
final class Settings {
    final String reliability;
    final Integer maxSpoutPending;
    final Double tickFreqSecs;
    final String serializer;
    final double metricsIntervalSecs;
    final int spoutBurst;
    final double emitBatchSecs;
    final long emitBatchBytes;
    final double executeBatchSecs;
    final double latencyTargetSecs;
    final long bpHighBytes;
    final long bpLowBytes;

    Settings(Map<String, Object> conf, String where) {
        reliability = String.valueOf(conf.getOrDefault("topology.reliability.mode", "ATMOST_ONCE"));
        maxSpoutPending = integer(conf, "topology.max.spout.pending", null, where);
        Double tick = number(conf, "topology.tick.tuple.freq.secs", null, where);
        tickFreqSecs = tick != null && tick > 0 ? tick : null;
        serializer = String.valueOf(conf.getOrDefault("heronbridge.serializer", "msgpack"));
        metricsIntervalSecs = number(conf, "heronbridge.metrics.interval.secs", 1.0, where);
        spoutBurst = integer(conf, "heronbridge.spout.burst", 1024, where);
        emitBatchSecs = number(conf, "heronbridge.emit.batch.time.ms", 5.0, where) / 1000;
        emitBatchBytes = integer(conf, "heronbridge.emit.batch.size.bytes", 32 << 10, where);
        executeBatchSecs = number(conf, "heronbridge.execute.batch.time.ms", 5.0, where) / 1000;
        latencyTargetSecs = number(conf, "heronbridge.spout.latency.target.ms", 20.0, where) / 1000;
        bpHighBytes = integer(conf, "heronbridge.backpressure.high.watermark.bytes", 4 << 20, where);
        bpLowBytes = integer(conf, "heronbridge.backpressure.low.watermark.bytes", 1 << 20, where);
    }

    boolean acking() {
        return "ATLEAST_ONCE".equals(reliability);
    }

    boolean stateful() {
        return "EFFECTIVELY_ONCE".equals(reliability);
    }

    private static Double number(Map<String, Object> conf, String key, Double dflt, String where) {
        Object v = conf.get(key);
        if (v == null) {
            return dflt;
        }
        if (v instanceof Number) {
            return ((Number) v).doubleValue();
        }
        try {
            return Double.parseDouble(String.valueOf(v));
        } catch (NumberFormatException e) {
            throw new HostError(where + ": config '" + key + "' expects a number, received " + v);
        }
    }

    private static Integer integer(Map<String, Object> conf, String key, Integer dflt, String where) {
        Double d = number(conf, key, dflt == null ? null : dflt.doubleValue(), where);
        return d == null ? null : d.intValue();
    }
}
