package heronbridge.jvm.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import heronbridge.jvm.Hex;
import heronbridge.jvm.wire.Frames;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The task loop's policy as the Python step applies it (scripts/step_vectors.py): each
 * scenario's operations replayed on SpoutStep and BoltStep, with the same inputs, must
 * give the same answers, make the same calls on the component and leave the same state.
 */
class StepVectorsTest {
    static final Path VECTORS = Path.of("src/test/resources/step_vectors.json");
    static final double CLOSE = 1e-9;

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> section(String name) throws Exception {
        return (List<Map<String, Object>>) Hex.json(VECTORS).get(name);
    }

    static double num(Object v) {
        return v == null ? Double.POSITIVE_INFINITY : ((Number) v).doubleValue();
    }

    static int whole(Object v) {
        return ((Number) v).intValue();
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object v) {
        List<Object> out = new ArrayList<>();
        for (Object o : (List<Object>) v) {
            out.add(o instanceof Number ? (Object) ((Number) o).longValue() : o);
        }
        return out;
    }

    /** A spout that notes what its step calls, as [name, msgId]. */
    static final class Noted implements SpoutStep.Calls {
        final List<List<Object>> calls = new ArrayList<>();

        @Override
        public void ack(Object msgId, Long latencyMs) {
            calls.add(List.of("ack", ((Number) msgId).longValue()));
        }

        @Override
        public void fail(Object msgId, Long latencyMs) {
            calls.add(List.of("fail", ((Number) msgId).longValue()));
        }

        @Override
        public void activate() {
            calls.add(List.of("activate"));
        }

        @Override
        public void deactivate() {
            calls.add(List.of("deactivate"));
        }
    }

    static int kind(Object name) {
        switch ((String) name) {
            case "acked":
                return Frames.ACKED;
            case "failed":
                return Frames.FAILED;
            default:
                return Frames.EXPIRED;
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void spoutStepsAnswerAsThePythonStep() throws Exception {
        int ops = 0;
        for (Map<String, Object> scenario : section("spouts")) {
            String name = (String) scenario.get("name");
            Noted spout = new Noted();
            Settings settings = new Settings((Map<String, Object>) scenario.get("config"), name);
            SpoutStep step = new SpoutStep(spout, settings, num(scenario.get("start")));
            for (Map<String, Object> op : (List<Map<String, Object>>) scenario.get("ops")) {
                String what = name + ", op " + ops + " " + op;
                double now = num(op.get("now"));
                int before = spout.calls.size();
                Object expect = op.get("expect");
                switch ((String) op.get("op")) {
                    case "state":
                        step.state((Boolean) op.get("running"), now);
                        break;
                    case "wait":
                        assertEquals(num(expect), step.waitFor(now, whole(op.get("pending")), list(op.get("ack_now")),
                            ((Number) op.get("out_bytes")).longValue()), CLOSE, what);
                        break;
                    case "begin":
                        assertEquals(expect, step.begin(now, whole(op.get("pending")),
                            ((Number) op.get("emitted")).longValue(), num(op.get("bytes_per_emit"))), what);
                        break;
                    case "returned":
                        assertEquals(expect, step.returned(now, whole(op.get("pending")),
                            ((Number) op.get("emitted")).longValue(), list(op.get("ack_now"))), what);
                        break;
                    case "settle":
                        List<SpoutStep.Settled> entries = new ArrayList<>();
                        for (Object e : (List<Object>) op.get("entries")) {
                            List<Object> pair = (List<Object>) e;
                            entries.add(new SpoutStep.Settled(pair.get(0), num(pair.get(1))));
                        }
                        step.settled(kind(op.get("kind")), now, entries, whole(op.get("pending")));
                        break;
                    case "due":
                        assertEquals(num(expect), step.due(now, whole(op.get("pending"))), CLOSE, what);
                        break;
                    case "metrics":
                        assertEquals(expect, step.metricsDue(now), what);
                        break;
                    default:
                        throw new AssertionError("unknown op in " + what);
                }
                List<List<Object>> calls = new ArrayList<>();
                for (Object call : (List<Object>) op.get("calls")) {
                    calls.add(list(call));
                }
                assertEquals(calls, spout.calls.subList(before, spout.calls.size()), what);
                Map<String, Object> after = (Map<String, Object>) op.get("after");
                Map<String, Object> counts = (Map<String, Object>) after.get("counts");
                assertEquals(num(after.get("limit")), step.window.limit, CLOSE, what);
                assertEquals(num(after.get("held_ms")), step.heldMs, CLOSE, what);
                assertEquals(num(after.get("backpressure_ms")), step.blockedMs, CLOSE, what);
                assertEquals(List.of(num(counts.get("next-tuple-count")), num(counts.get("ack-count")),
                    num(counts.get("fail-count")), num(counts.get("timeout-count"))),
                    List.of((double) step.nextTupleCount, (double) step.ackCount, (double) step.failCount,
                        (double) step.timeoutCount), what);
                ops++;
            }
        }
        assertTrue(ops > 200, "only " + ops + " spout operations");
    }

    @Test
    @SuppressWarnings("unchecked")
    void boltStepsAnswerAsThePythonStep() throws Exception {
        int ops = 0;
        for (Map<String, Object> scenario : section("bolts")) {
            String name = (String) scenario.get("name");
            double[] clock = {num(scenario.get("start"))};
            Settings settings = new Settings((Map<String, Object>) scenario.get("config"), name);
            BoltStep step = new BoltStep(settings, () -> clock[0]);
            for (Map<String, Object> op : (List<Map<String, Object>>) scenario.get("ops")) {
                String what = name + ", op " + ops + " " + op;
                clock[0] = num(op.get("now"));
                Object expect = op.get("expect");
                switch ((String) op.get("op")) {
                    case "wait":
                        Map<String, Object> answer = (Map<String, Object>) expect;
                        assertEquals(num(answer.get("wait")),
                            step.waitFor(clock[0], ((Number) op.get("out_bytes")).longValue()), CLOSE, what);
                        assertEquals(answer.get("reading"), step.reading, what);
                        break;
                    case "done":  // the turn's end, as the task's bolt loop ends it
                        Map<String, Object> end = (Map<String, Object>) expect;
                        boolean ticked = step.tickDue(clock[0]);
                        if (ticked) {
                            step.ran(1, 0);
                        }
                        assertEquals(end.get("tick"), ticked, what);
                        assertEquals(end.get("published"), step.metricsDue(clock[0]), what);
                        break;
                    case "batch":
                        int n = whole(op.get("tuples"));
                        double perTuple = num(op.get("per_tuple"));
                        List<Integer> tuples = new ArrayList<>();
                        for (int i = 0; i < n; i++) {
                            tuples.add(i);
                        }
                        List<Object> flushedAfter = new ArrayList<>();
                        int[] done = {0};
                        step.runFrame(tuples, t -> {
                            clock[0] += perTuple;
                            done[0]++;
                        }, () -> flushedAfter.add((long) done[0]));
                        assertEquals(list(expect), flushedAfter, what);
                        break;
                    default:
                        throw new AssertionError("unknown op in " + what);
                }
                Map<String, Object> after = (Map<String, Object>) op.get("after");
                assertEquals(num(((Map<String, Object>) after.get("counts")).get("execute-count")),
                    (double) step.executeCount, what);
                assertEquals(num(after.get("ticks")), (double) step.ticks, what);
                assertEquals(num(after.get("backpressure_ms")), step.blockedMs, CLOSE, what);
                ops++;
            }
        }
        assertTrue(ops >= 20, "only " + ops + " bolt operations");
    }
}
