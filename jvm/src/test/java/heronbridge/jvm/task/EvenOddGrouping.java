package heronbridge.jvm.task;

import java.util.List;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.grouping.CustomStreamGrouping;
import org.apache.storm.task.WorkerTopologyContext;

/** A custom grouping: even numbers to the first target, odd ones to the last; records its prepare. */
public class EvenOddGrouping implements CustomStreamGrouping {
    static volatile List<Integer> prepared;
    static volatile int preparedBy;
    private List<Integer> targets;

    @Override
    public void prepare(WorkerTopologyContext context, GlobalStreamId stream, List<Integer> targetTasks) {
        targets = targetTasks;
        prepared = targetTasks;
        preparedBy = context.getThisWorkerTasks().get(0);
    }

    @Override
    public List<Integer> chooseTasks(int taskId, List<Object> values) {
        int n = ((Number) values.get(1)).intValue();
        return List.of(n % 2 == 0 ? targets.get(0) : targets.get(targets.size() - 1));
    }
}
