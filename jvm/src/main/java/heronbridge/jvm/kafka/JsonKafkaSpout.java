package heronbridge.jvm.kafka;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.storm.kafka.spout.FirstPollOffsetStrategy;
import org.apache.storm.kafka.spout.KafkaSpout;
import org.apache.storm.kafka.spout.KafkaSpoutConfig;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/**
 * storm-kafka-client's own KafkaSpout, configured from one JSON string: the shape a
 * streamparse {@code JavaSpout.spec(full_class_name=..., args_list=[json.dumps({...})])}
 * can pass (a JavaObject's arguments are strings and numbers, not a KafkaSpoutConfig).
 *
 * <pre>
 * {"bootstrap.servers": "127.0.0.1:9092",          required
 *  "topics": ["words"] | "topic.pattern": "w.*",   one of them
 *  "group.id": "...", "processing.guarantee": "AT_LEAST_ONCE" | "AT_MOST_ONCE" | "NO_GUARANTEE",
 *  "first.poll.offset.strategy": "EARLIEST" | "LATEST" | "UNCOMMITTED_EARLIEST" | "UNCOMMITTED_LATEST",
 *  "offset.commit.period.ms": 30000, "max.uncommitted.offsets": 10000000, "poll.timeout.ms": 200,
 *  "partition.refresh.period.ms": 2000, "emit.null.tuples": false,
 *  "props": {"max.poll.records": 500, ...}}         any Kafka consumer property
 * </pre>
 *
 * Its tuples are KafkaSpout's default: {@code (topic, partition, offset, key, value)} on
 * the default stream, keys and values as strings.
 */
public class JsonKafkaSpout extends KafkaSpout<String, String> {
    private static final long serialVersionUID = 1L;

    public JsonKafkaSpout(String json) {
        super(config(json));
    }

    @SuppressWarnings("unchecked")
    static KafkaSpoutConfig<String, String> config(String json) {
        Object parsed = JSONValue.parse(json);
        if (!(parsed instanceof Map)) {
            throw new IllegalArgumentException("expected the Kafka spout's configuration as a JSON object, received "
                + json);
        }
        Map<String, Object> c = (Map<String, Object>) parsed;
        Object servers = c.get("bootstrap.servers");
        if (!(servers instanceof String) || ((String) servers).isEmpty()) {
            throw new IllegalArgumentException("expected \"bootstrap.servers\" (host:port,...) in the Kafka spout's "
                + "configuration, received " + servers);
        }
        KafkaSpoutConfig.Builder<String, String> b;
        if (c.get("topics") instanceof List && !((List<?>) c.get("topics")).isEmpty()) {
            Set<String> topics = new LinkedHashSet<>();
            for (Object t : (List<Object>) c.get("topics")) {
                topics.add(String.valueOf(t));
            }
            b = KafkaSpoutConfig.builder((String) servers, topics);
        } else if (c.get("topic.pattern") instanceof String) {
            b = KafkaSpoutConfig.builder((String) servers, Pattern.compile((String) c.get("topic.pattern")));
        } else {
            throw new IllegalArgumentException("expected \"topics\" (a non-empty list) or \"topic.pattern\" in the "
                + "Kafka spout's configuration, received neither: " + json);
        }
        if (c.get("props") instanceof Map) {
            b.setProp((Map<String, Object>) c.get("props"));
        }
        if (c.get("group.id") != null) {
            b.setProp("group.id", String.valueOf(c.get("group.id")));
        }
        if (c.get("processing.guarantee") != null) {
            b.setProcessingGuarantee(KafkaSpoutConfig.ProcessingGuarantee.valueOf(
                String.valueOf(c.get("processing.guarantee"))));
        }
        if (c.get("first.poll.offset.strategy") != null) {
            b.setFirstPollOffsetStrategy(FirstPollOffsetStrategy.valueOf(
                String.valueOf(c.get("first.poll.offset.strategy"))));
        }
        if (c.get("offset.commit.period.ms") instanceof Number) {
            b.setOffsetCommitPeriodMs(((Number) c.get("offset.commit.period.ms")).longValue());
        }
        if (c.get("max.uncommitted.offsets") instanceof Number) {
            b.setMaxUncommittedOffsets(((Number) c.get("max.uncommitted.offsets")).intValue());
        }
        if (c.get("poll.timeout.ms") instanceof Number) {
            b.setPollTimeoutMs(((Number) c.get("poll.timeout.ms")).longValue());
        }
        if (c.get("partition.refresh.period.ms") instanceof Number) {
            b.setPartitionRefreshPeriodMs(((Number) c.get("partition.refresh.period.ms")).longValue());
        }
        if (c.get("emit.null.tuples") instanceof Boolean) {
            b.setEmitNullTuples((Boolean) c.get("emit.null.tuples"));
        }
        List<String> unknown = new ArrayList<>(c.keySet());
        unknown.removeAll(List.of("bootstrap.servers", "topics", "topic.pattern", "props", "group.id",
            "processing.guarantee", "first.poll.offset.strategy", "offset.commit.period.ms",
            "max.uncommitted.offsets", "poll.timeout.ms", "partition.refresh.period.ms", "emit.null.tuples"));
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown keys " + unknown + " in the Kafka spout's configuration "
                + "(consumer properties go under \"props\")");
        }
        return b.build();
    }
}
