package heronbridge.jvm.task;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.storm.hooks.BaseTaskHook;
import org.apache.storm.hooks.info.BoltAckInfo;
import org.apache.storm.hooks.info.BoltExecuteInfo;
import org.apache.storm.hooks.info.BoltFailInfo;
import org.apache.storm.hooks.info.EmitInfo;
import org.apache.storm.hooks.info.SpoutAckInfo;
import org.apache.storm.hooks.info.SpoutFailInfo;
import org.apache.storm.task.TopologyContext;

/** A task hook (topology.auto.task.hooks) that writes down what Storm's hook calls told it. */
public class RecordingHook extends BaseTaskHook {
    static final List<String> EVENTS = new CopyOnWriteArrayList<>();

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context) {
        EVENTS.add("prepare " + context.getThisComponentId() + " " + context.getThisTaskId());
    }

    @Override
    public void emit(EmitInfo info) {
        EVENTS.add("emit " + info.stream + " " + info.values + " from " + info.taskId + " to " + info.outTasks);
    }

    @Override
    public void boltExecute(BoltExecuteInfo info) {
        EVENTS.add("execute " + info.tuple.getSourceStreamId() + " " + info.tuple.getValues() + " by "
            + info.executingTaskId);
    }

    @Override
    public void boltAck(BoltAckInfo info) {
        EVENTS.add("ack " + info.tuple.getValues());
    }

    @Override
    public void boltFail(BoltFailInfo info) {
        EVENTS.add("fail " + info.tuple.getValues());
    }

    @Override
    public void spoutAck(SpoutAckInfo info) {
        EVENTS.add("spout ack " + info.messageId);
    }

    @Override
    public void spoutFail(SpoutFailInfo info) {
        EVENTS.add("spout fail " + info.messageId);
    }

    @Override
    public void cleanup() {
        EVENTS.add("cleanup");
    }
}
