package heronbridge.jvm.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import heronbridge.jvm.plan.ComponentSpec;
import java.util.List;
import org.apache.storm.kafka.spout.FirstPollOffsetStrategy;
import org.apache.storm.kafka.spout.KafkaSpout;
import org.apache.storm.kafka.spout.KafkaSpoutConfig;
import org.apache.storm.topology.OutputFieldsGetter;
import org.junit.jupiter.api.Test;

/** KafkaSpout made the way a streamparse JavaSpout names it: a class and one string argument. */
class JsonKafkaSpoutTest {
    static final String CONF = "{\"bootstrap.servers\": \"127.0.0.1:9092\", \"topics\": [\"words\"], "
        + "\"group.id\": \"wc\", \"processing.guarantee\": \"AT_LEAST_ONCE\", "
        + "\"first.poll.offset.strategy\": \"EARLIEST\", \"offset.commit.period.ms\": 1000, "
        + "\"props\": {\"max.poll.records\": 100}}";

    @Test
    void configuredFromJson() {
        KafkaSpoutConfig<String, String> c = JsonKafkaSpout.config(CONF);
        assertEquals("127.0.0.1:9092", c.getKafkaProps().get("bootstrap.servers"));
        assertEquals("wc", c.getConsumerGroupId());
        assertEquals(100, c.getKafkaProps().get("max.poll.records"));
        assertEquals(KafkaSpoutConfig.ProcessingGuarantee.AT_LEAST_ONCE, c.getProcessingGuarantee());
        assertEquals(FirstPollOffsetStrategy.EARLIEST, c.getFirstPollOffsetStrategy());
        assertEquals(1000, c.getOffsetsCommitPeriodMs());
    }

    @Test
    void madeAsAJavaSpoutSpecNamesIt() {
        String spec = "{\"class\": \"" + JsonKafkaSpout.class.getName() + "\", \"args\": [{\"string\": "
            + org.apache.storm.shade.net.minidev.json.JSONValue.toJSONString(CONF) + "}]}";
        Object spout = ComponentSpec.parse(spec, "component 'kafka'").instantiate(getClass().getClassLoader(), "here");
        assertTrue(spout instanceof KafkaSpout);
        OutputFieldsGetter getter = new OutputFieldsGetter();
        ((KafkaSpout<?, ?>) spout).declareOutputFields(getter);
        assertEquals(List.of("topic", "partition", "offset", "key", "value"),
            getter.getFieldsDeclaration().get("default").get_output_fields());
    }

    @Test
    void badConfigurationIsExplained() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> JsonKafkaSpout.config("{\"topics\": [\"x\"]}"));
        assertTrue(e.getMessage().contains("expected \"bootstrap.servers\""), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> JsonKafkaSpout.config("{\"bootstrap.servers\": \"h:1\", \"topics\": [\"x\"], \"max.poll\": 1}"));
        assertTrue(e.getMessage().contains("unknown keys [max.poll]"), e.getMessage());
    }
}
