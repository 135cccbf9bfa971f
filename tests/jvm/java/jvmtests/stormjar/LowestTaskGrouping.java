package jvmtests.stormjar;

import java.util.Collections;
import java.util.List;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.grouping.CustomStreamGrouping;
import org.apache.storm.task.WorkerTopologyContext;

/** A custom grouping (Storm's customGrouping serializes it): every tuple to the lowest target task. */
public class LowestTaskGrouping implements CustomStreamGrouping {
    private List<Integer> target;

    @Override
    public void prepare(WorkerTopologyContext context, GlobalStreamId stream, List<Integer> targetTasks) {
        target = List.of(Collections.min(targetTasks));
    }

    @Override
    public List<Integer> chooseTasks(int taskId, List<Object> values) {
        return target;
    }
}
