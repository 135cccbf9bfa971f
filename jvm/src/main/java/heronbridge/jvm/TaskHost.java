package heronbridge.jvm;

import heronbridge.jvm.task.Task;
import heronbridge.jvm.wire.Identity;
import heronbridge.jvm.wire.Secret;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Entry point of a Java task's process, with the Python instance's arguments:
 * {@code java -cp host.jar:storm:topology heronbridge.jvm.TaskHost --topology-id ID --task N
 * --container C --stmgr ADDRESS --metrics PATH [--incarnation I] [--code-dir DIR]}.
 * The stream manager's address is a Unix socket path or HOST:PORT; the secret comes from
 * the pipe named by $HERONBRIDGE_SECRET_FD.
 */
public final class TaskHost {
    private TaskHost() {
    }

    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                usage("expected --option value pairs, received " + argv[i]);
            }
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        for (String required : new String[] {"topology-id", "task", "container", "stmgr", "metrics"}) {
            if (!args.containsKey(required)) {
                usage("expected --" + required);
            }
        }
        String topologyId = args.get("topology-id");
        int container = Integer.parseInt(args.get("container"));
        Task task = new Task(topologyId, Integer.parseInt(args.get("task")), container,
            stmgrIdentity(topologyId, container, args.get("stmgr")), args.get("metrics"), Secret.inherited(),
            Integer.parseInt(args.getOrDefault("incarnation", "0")),
            args.getOrDefault("code-dir", System.getProperty("user.dir")));
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            task.stop();  // SIGTERM: the loop ends, the component closes, what it emitted goes out
            try {
                done.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                // exiting anyway
            }
        }));
        int code = task.run();
        done.countDown();
        System.exit(code);
    }

    /** The listener a task dials: its container's stream manager (PROTOCOL.md identities). */
    static Identity stmgrIdentity(String topologyId, int container, String address) {
        String name = "stmgr-" + container;
        int colon = address.lastIndexOf(':');
        if (!address.startsWith("/") && colon > 0 && address.substring(colon + 1).matches("\\d+")) {
            return Identity.tcp(topologyId, name, address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
        }
        return Identity.unix(topologyId, name, address);
    }

    private static void usage(String problem) {
        System.err.println("heronbridge JVM task host: " + problem + "\nusage: TaskHost --topology-id ID --task N "
            + "--container C --stmgr ADDRESS --metrics PATH [--incarnation I] [--code-dir DIR]");
        System.exit(2);
    }
}
