package jvmtests.stormjar;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;

/**
 * Appends each (word, count) it receives to {@code <OUT>/counts.txt} as
 * "index word count": index is the sending task's place among its component's tasks
 * (what Storm's fields grouping chose), so the test can check the routing too.
 */
public class RecordBolt extends BaseRichBolt {
    static final String OUT = "stormjar.out";
    private OutputCollector collector;
    private TopologyContext context;
    private Writer out;

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        this.collector = collector;
        this.context = context;
        try {
            Path dir = Path.of(String.valueOf(conf.get(OUT)));
            Files.createDirectories(dir);
            out = Files.newBufferedWriter(dir.resolve("counts.txt"), StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void execute(Tuple input) {
        List<Integer> senders = new ArrayList<>(context.getComponentTasks(input.getSourceComponent()));
        Collections.sort(senders);
        try {
            out.write(senders.indexOf(input.getSourceTask()) + " " + input.getString(0) + " "
                + input.getLong(1) + "\n");
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
