package heronbridge.jvm;

import heronbridge.jvm.task.Groupings;
import heronbridge.jvm.wire.Secret;
import java.util.HashMap;
import java.util.Map;

/**
 * Entry point of the JVM a task that is not Java starts for its Java custom groupings
 * (runtime/instance/java_groupings.py): {@code java -cp host.jar:storm:topology
 * heronbridge.jvm.GroupingHost --topology-id ID --task N --container C --listener PATH
 * [--code-dir DIR]}. It dials the task's Unix socket PATH with the key from the pipe named
 * by $HERONBRIDGE_SECRET_FD, and ends when the task closes the link.
 */
public final class GroupingHost {
    private GroupingHost() {
    }

    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            args.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        }
        for (String required : new String[] {"topology-id", "task", "container", "listener"}) {
            if (!args.containsKey(required)) {
                System.err.println("heronbridge JVM grouping host: expected --" + required + "\nusage: GroupingHost "
                    + "--topology-id ID --task N --container C --listener PATH [--code-dir DIR]");
                System.exit(2);
            }
        }
        int code;
        try {
            Groupings groupings = new Groupings(args.get("topology-id"), Integer.parseInt(args.get("task")),
                Integer.parseInt(args.get("container")), args.get("listener"),
                args.getOrDefault("code-dir", System.getProperty("user.dir")), Secret.inherited());
            try {
                code = groupings.run();
            } finally {
                groupings.close();
            }
        } catch (Throwable e) {
            System.err.println("task " + args.get("task") + "'s Java custom groupings: " + e);
            e.printStackTrace();
            code = 1;
        }
        System.exit(code);
    }
}
