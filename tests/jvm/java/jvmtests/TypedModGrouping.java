package jvmtests;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.grouping.CustomStreamGrouping;
import org.apache.storm.task.WorkerTopologyContext;

/**
 * A custom grouping that chooses by the Java type of a tuple's first value, as a ShellBolt
 * hands it over from its subprocess's JSON: an Integer n to target (n + offset) mod the
 * target count, a Long to every target, a String s to target (s.length() + offset) mod
 * the count. The offset is the constructor's argument (streamparse's args_list). Two
 * values misbehave on purpose: "boom" makes chooseTasks throw, -1 makes it choose task
 * 9999, which is no target.
 */
public class TypedModGrouping implements CustomStreamGrouping {
    private final long offset;
    private List<Integer> targets;

    public TypedModGrouping(Long offset) {
        this.offset = offset;
    }

    @Override
    public void prepare(WorkerTopologyContext context, GlobalStreamId stream, List<Integer> targetTasks) {
        targets = new ArrayList<>(targetTasks);
        Collections.sort(targets);
    }

    @Override
    public List<Integer> chooseTasks(int taskId, List<Object> values) {
        Object v = values.get(0);
        if (v instanceof Integer) {
            int n = (Integer) v;
            if (n == -1) {
                return List.of(9999);
            }
            return List.of(targets.get((int) Math.floorMod(n + offset, targets.size())));
        }
        if (v instanceof Long) {
            return targets;
        }
        if ("boom".equals(v)) {
            throw new IllegalStateException("no route for boom");
        }
        if (v instanceof String) {
            return List.of(targets.get((int) Math.floorMod(((String) v).length() + offset, targets.size())));
        }
        throw new IllegalArgumentException("expected an Integer, a Long or a String, received "
            + (v == null ? "null" : v.getClass().getName()));
    }
}
