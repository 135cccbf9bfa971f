package heronbridge.jvm;

/**
 * An error of the task host that names where it happened: the topology, the component and
 * the task, what was expected and what was received (the runtime's rule for every error).
 */
public class HostError extends RuntimeException {
    public HostError(String message) {
        super(message);
    }

    public HostError(String message, Throwable cause) {
        super(message, cause);
    }

    /** The location part of a message, as the Python side writes it. */
    public static String where(String topology, String component, Integer task) {
        StringBuilder out = new StringBuilder();
        if (topology != null) {
            out.append("topology '").append(topology).append('\'');
        }
        if (component != null) {
            out.append(out.length() > 0 ? ", " : "").append("component '").append(component).append('\'');
        }
        if (task != null) {
            out.append(out.length() > 0 ? ", " : "").append("task ").append(task);
        }
        return out.toString();
    }
}
