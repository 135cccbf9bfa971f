package jvmtests.beans;

import java.io.FileWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;

/**
 * What a Java bolt received as a Reading: one JSON line per tuple in
 * {@code <beans.out>/check-<task>.jsonl}, with the value's class, whether it equals the
 * reading its id names, whether the values after the id equal its Reading.extras, and the
 * classes of the numbers in its last value.
 */
public class ReadingCheckBolt extends BaseRichBolt {
    private OutputCollector collector;
    private Writer out;

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        try {
            Path dir = Path.of(conf.get("beans.out").toString());
            Files.createDirectories(dir);
            out = new FileWriter(dir.resolve("check-" + context.getThisTaskId() + ".jsonl").toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void execute(Tuple input) {
        Object value = input.getValue(0);
        long id = input.getLong(1);
        try {
            // Equal as boxed values are: the same class (Character, Double, Float, Short, Byte) and
            // value; a BigDecimal's scale too.
            boolean extras = Reading.extras(id).equals(input.getValues().subList(2, input.size()));
            StringBuilder numbers = new StringBuilder();
            for (Object n : (List<?>) input.getValue(input.size() - 1)) {
                numbers.append(numbers.length() == 0 ? "\"" : ", \"").append(n.getClass().getName()).append('"');
            }
            out.write("{\"id\": " + id + ", \"class\": \"" + value.getClass().getName() + "\", \"equal\": "
                + Reading.of(id).equals(value) + ", \"extras\": " + extras + ", \"numbers\": [" + numbers
                + "]}\n");
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        collector.ack(input);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
    }
}
