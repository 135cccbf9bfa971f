package heronbridge.jvm.task;

import heronbridge.jvm.wire.Frames;
import heronbridge.jvm.wire.Handshake;
import heronbridge.jvm.wire.Identity;
import heronbridge.jvm.wire.Link;
import heronbridge.runtime.Control;
import java.io.IOException;
import java.util.List;

/**
 * A task's metrics to its container's metrics manager (runtime/instance/metrics.py). Best
 * effort: metrics never block or crash the task; counters are cumulative, so a lost
 * sample is replaced by the next one.
 */
final class MetricsPublisher {
    private final Identity identity;
    private final byte[] secret;
    private final Control.RegisterMetricsPublisher register;
    private Link link;
    private long retryAt;

    MetricsPublisher(String topologyId, String path, String component, int task, byte[] secret) {
        this.identity = Identity.unix(topologyId, "metrics", path);
        this.secret = secret;
        this.register = Control.RegisterMetricsPublisher.newBuilder().setTopologyId(topologyId)
            .setComponent(component).setTaskId(task).build();
    }

    void publish(Control.TaskMetrics metrics) {
        Link l = link != null ? link : connect();
        if (l == null) {
            return;
        }
        try {
            l.send(List.of(Frames.controlFrame(Control.MetricsPublish.newBuilder().addTasks(metrics).build(), 0)));
        } catch (IOException e) {
            l.close();
            link = null;
        }
    }

    private Link connect() {
        if (System.nanoTime() < retryAt) {
            return null;
        }
        try {
            link = Link.dial(identity, secret, Handshake.TASK, false);
            link.send(List.of(Frames.controlFrame(register, 0)));
            return link;
        } catch (IOException | RuntimeException e) {
            link = null;
            retryAt = System.nanoTime() + 1_000_000_000L;
            return null;
        }
    }

    void close() {
        if (link != null) {
            link.close();
        }
    }
}
