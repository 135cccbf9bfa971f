package heronbridge.storm;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.KillOptions;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;

/**
 * LocalCluster's main (`storm local`), ended by killing the topology as `storm kill -w N`
 * does, rather than by stopping local mode under it: so its spouts are deactivated, and a
 * multilang spout hears "deactivate", before the topology is removed.
 *
 * <p>Arguments: the kill's wait in seconds, then the class to run and its arguments, as
 * LocalCluster's main takes them. After that class's main returns (it submitted the
 * topology), waits for a line on stdin (or its end), then kills every topology with that
 * wait, waits until Nimbus has removed them, logs {@value #KILLED} and stops local mode.
 */
public final class KillingLocalCluster {
    public static final String KILLED = "heronbridge: topologies killed";
    private static final long POLL_MILLIS = 100;

    private KillingLocalCluster() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            throw new IllegalArgumentException(
                "expected the kill's wait in seconds and a class to run, received "
                    + Arrays.toString(args));
        }
        int waitSecs = Integer.parseInt(args[0]);
        String klass = args[1];
        String[] rest = Arrays.copyOfRange(args, 2, args.length);
        LocalCluster.withLocalModeOverride(() -> {
            Method main = Class.forName(klass).getDeclaredMethod("main", String[].class);
            main.invoke(null, (Object) rest);
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                .readLine();
            // The override LocalCluster installed: this client is the local Nimbus.
            NimbusClient.withConfiguredClient(nimbus -> {
                List<TopologySummary> topologies = nimbus.getTopologySummaries();
                for (TopologySummary topology : topologies) {
                    KillOptions options = new KillOptions();
                    options.set_wait_secs(waitSecs);
                    nimbus.killTopologyWithOpts(topology.get_name(), options);
                    System.out.println("heronbridge: killing topology " + topology.get_name()
                        + " with a wait of " + waitSecs + " s");
                }
                while (!nimbus.getTopologySummaries().isEmpty()) {
                    Thread.sleep(POLL_MILLIS);
                }
            }, Utils.readStormConfig());
            System.out.println(KILLED);
            System.out.flush();
            return null;
        }, 0, new HashMap<>());
        System.exit(0);
    }
}
