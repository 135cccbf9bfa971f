package heronbridge.jvm.task;

import heronbridge.runtime.Control.ExceptionRecord;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The latest distinct exceptions of one task, keyed by stack trace (telemetry.ExceptionLog). */
final class ExceptionLog {
    static final int MAX = 10;
    private final Map<String, ExceptionRecord.Builder> records = new LinkedHashMap<>();

    synchronized void add(Throwable error) {
        StringWriter trace = new StringWriter();
        error.printStackTrace(new PrintWriter(trace));
        String key = trace.toString().strip();
        long now = System.currentTimeMillis();
        ExceptionRecord.Builder r = records.remove(key);
        if (r == null) {
            r = ExceptionRecord.newBuilder().setClassName(error.getClass().getName())
                .setMessage(String.valueOf(error.getMessage())).setStacktrace(key).setFirstMs(now);
        }
        r.setLastMs(now).setCount(r.getCount() + 1);
        records.put(key, r);
        if (records.size() > MAX) {
            records.remove(records.keySet().iterator().next());
        }
    }

    synchronized List<ExceptionRecord> all() {
        List<ExceptionRecord> out = new ArrayList<>();
        for (ExceptionRecord.Builder r : records.values()) {
            out.add(r.build());
        }
        return out;
    }
}
