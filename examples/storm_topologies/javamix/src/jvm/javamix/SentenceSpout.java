package javamix;

import java.io.FileWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;
import org.apache.storm.utils.Utils;

/**
 * Each sentence of a fixed list, `javamix.rounds` times (id = its position), tracked by
 * its id; a failed id is emitted again. It stops when every id is out.
 *
 * <p>For benchmarks: `javamix.rate` caps the emits per second (0: no cap), and with
 * `javamix.stats.dir` the spout appends one JSON line a second to
 * {@code <dir>/spout-<task>.jsonl}: the time, ids acked so far, and that second's
 * median and 99th percentile complete latency (emit to ack, in ms).
 */
public class SentenceSpout extends BaseRichSpout {
    static final String[] SENTENCES = {
        "the cow jumped over the moon",
        "an apple a day keeps the doctor away",
        "four score and seven years ago",
        "snow white and the seven dwarfs",
        "i am at two with nature",
    };
    private SpoutOutputCollector collector;
    private long next;
    private long total;
    private double rate;
    private long started;
    private final Deque<Long> failed = new ArrayDeque<>();
    private final Map<Long, Long> emittedAt = new HashMap<>();
    private final List<Long> latencies = new ArrayList<>();
    private long acked;
    private long statsAt;
    private Writer stats;

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        this.collector = collector;
        total = SENTENCES.length * number(conf.get("javamix.rounds"), 20);
        rate = number(conf.get("javamix.rate"), 0);
        started = System.nanoTime();
        Object dir = conf.get("javamix.stats.dir");
        if (dir != null) {
            try {
                Files.createDirectories(Path.of(dir.toString()));
                stats = new FileWriter(Path.of(dir.toString(), "spout-" + context.getThisTaskId() + ".jsonl").toFile(),
                    true);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static long number(Object value, long otherwise) {
        return value == null ? otherwise : (long) Double.parseDouble(value.toString());
    }

    @Override
    public void nextTuple() {
        report();
        Long id = failed.poll();
        if (id == null && next < total && (rate <= 0 || next < (System.nanoTime() - started) / 1e9 * rate)) {
            id = next++;
        }
        if (id == null) {
            Utils.sleep(1);
            return;
        }
        if (stats != null) {
            emittedAt.put(id, System.nanoTime());
        }
        collector.emit(new Values(id, SENTENCES[(int) (id % SENTENCES.length)]), id);
    }

    @Override
    public void ack(Object id) {
        acked++;
        Long at = emittedAt.remove(id);
        if (at != null) {
            latencies.add(System.nanoTime() - at);
        }
    }

    @Override
    public void fail(Object id) {
        emittedAt.remove(id);
        failed.add((Long) id);
    }

    private void report() {
        long now = System.currentTimeMillis();
        if (stats == null || now < statsAt) {
            return;
        }
        statsAt = now + 1000;
        Collections.sort(latencies);
        try {
            stats.write("{\"t\": " + now + ", \"acked\": " + acked + ", \"p50_ms\": " + percentile(0.5)
                + ", \"p99_ms\": " + percentile(0.99) + "}\n");
            stats.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        latencies.clear();
    }

    private double percentile(double q) {
        return latencies.isEmpty() ? -1 : latencies.get((int) Math.min(latencies.size() - 1, q * latencies.size())) / 1e6;
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("id", "sentence"));
    }
}
