package heronbridge.jvm.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import heronbridge.jvm.HostError;
import heronbridge.jvm.plan.Plan;
import heronbridge.jvm.plan.StormView;
import heronbridge.jvm.values.MsgpackCodec;
import heronbridge.runtime.TopologyOuterClass;
import heronbridge.runtime.TopologyOuterClass.ComponentDecl;
import heronbridge.runtime.TopologyOuterClass.ComponentKind;
import heronbridge.runtime.TopologyOuterClass.GroupingKind;
import heronbridge.runtime.TopologyOuterClass.InputDecl;
import heronbridge.runtime.TopologyOuterClass.StreamDecl;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.task.TopologyContext;
import org.junit.jupiter.api.Test;

/** Routing as Storm routes, run in the sending task: every grouping kind, and the context Storm's classes answer. */
class GroupingTest {
    static ComponentDecl.Builder bolt(String name, int par, String stream, GroupingKind kind, String... fields) {
        InputDecl.Builder in = InputDecl.newBuilder().setComponent("src").setStream(stream).setGrouping(kind)
            .addAllFields(List.of(fields));
        if (kind == GroupingKind.CUSTOM) {
            in.setCustom("{\"class\": \"" + EvenOddGrouping.class.getName() + "\"}");
        }
        return ComponentDecl.newBuilder().setName(name).setKind(ComponentKind.BOLT).setParallelism(par)
            .setClassPath("x:Y").addInputs(in);
    }

    static Plan plan() {
        TopologyOuterClass.Topology t = TopologyOuterClass.Topology.newBuilder().setId("g-1").setName("g")
            .setConfigJson("{\"topology.reliability.mode\": \"ATLEAST_ONCE\"}")
            .addComponents(ComponentDecl.newBuilder().setName("src").setKind(ComponentKind.SPOUT).setParallelism(1)
                .setClassPath("java:src")
                .setConfigJson("{\"heronbridge.java.component\": {\"class\": \"org.apache.storm.testing.TestWordSpout\"}}")
                .addOutputs(StreamDecl.newBuilder().setName("default").addFields("k").addFields("n"))
                .addOutputs(StreamDecl.newBuilder().setName("d").addFields("x").setDirect(true)))
            .addComponents(bolt("all", 2, "default", GroupingKind.ALL))
            .addComponents(bolt("custom", 2, "default", GroupingKind.CUSTOM))
            .addComponents(bolt("direct", 2, "d", GroupingKind.DIRECT))
            .addComponents(bolt("fields", 3, "default", GroupingKind.FIELDS, "k"))
            .addComponents(bolt("global", 2, "default", GroupingKind.GLOBAL))
            .addComponents(bolt("partial", 3, "default", GroupingKind.PARTIAL_KEY, "k"))
            .addComponents(bolt("zlocal", 2, "default", GroupingKind.LOCAL_OR_SHUFFLE))
            .addComponents(bolt("zshuffle", 2, "default", GroupingKind.SHUFFLE))
            .build();
        return new Plan(t);
    }

    // Tasks: all=1,2 custom=3,4 direct=5,6 fields=7,8,9 global=10,11 partial=12,13,14 src=15 zlocal=16,17
    // zshuffle=18,19.
    static final int SRC = 15;

    SpoutCollector collector(Plan plan) {
        StormView view = new StormView(plan, SRC, 0, List.of(SRC), ".", ".");
        Map<String, Object> conf = view.conf("src", null);
        return new SpoutCollector(plan, SRC, new MsgpackCodec(), true, view.workerContext(conf), conf,
            getClass().getClassLoader());
    }

    @Test
    void everyGroupingAsStormRoutes() {
        Plan plan = plan();
        assertEquals(List.of(7, 8, 9), plan.componentTasks.get("fields"));
        SpoutCollector out = collector(plan);
        assertEquals(List.of(3, 4), EvenOddGrouping.prepared, "the custom grouping was prepared in the sender");
        assertEquals(SRC, EvenOddGrouping.preparedBy);
        for (String key : List.of("apple", "pear", "fig", "kiwi", "plum")) {
            for (int n : new int[] {1, 2}) {
                List<Integer> to = out.emit("default", Arrays.asList(key, n), null);
                Set<Integer> got = new HashSet<>(to);
                assertTrue(got.containsAll(List.of(1, 2)), "all: every task");
                assertTrue(got.contains(n % 2 == 0 ? 3 : 4), "custom: chosen by the class");
                int fields = 7 + Math.floorMod(Arrays.deepHashCode(new Object[] {key}), 3);
                assertTrue(got.contains(fields), "fields: Storm's hash of " + key);
                assertTrue(got.contains(10), "global: the lowest task");
                assertTrue(to.stream().anyMatch(t -> t >= 12 && t <= 14), "partial key: one of its tasks");
                assertTrue(got.contains(16) || got.contains(17), "local or shuffle: no local task, so any");
                assertTrue(got.contains(18) || got.contains(19), "shuffle (Storm's load-aware shuffle)");
                assertEquals(8, to.size(), "one task per subscriber, two for all: " + to);
            }
        }
    }

    @Test
    void shuffleSpreadsEvenly() {
        SpoutCollector out = collector(plan());
        int[] counts = new int[2];
        for (int i = 0; i < 1000; i++) {
            for (int t : out.emit("default", Arrays.asList("k", i), null)) {
                if (t >= 18) {
                    counts[t - 18]++;
                }
            }
        }
        assertEquals(1000, counts[0] + counts[1]);
        assertTrue(Math.abs(counts[0] - counts[1]) <= 100, Arrays.toString(counts));
    }

    @Test
    void directEmits() {
        SpoutCollector out = collector(plan());
        out.emitDirect(6, "d", List.of("x"), null);
        assertEquals(1, out.emitted);
        out.emitDirect(1, "d", List.of("x"), null);  // not a subscriber of d: dropped, as Storm drops it
        HostError e = assertThrows(HostError.class, () -> out.emit("d", List.of("x"), null));
        assertTrue(e.getMessage().contains("topology 'g', component 'src', task 15: stream 'd' is direct"),
            e.getMessage());
        e = assertThrows(HostError.class, () -> out.emit("default", List.of("only one"), null));
        assertTrue(e.getMessage().contains("expects 2 values for fields [k, n], received 1"), e.getMessage());
        e = assertThrows(HostError.class, () -> out.emit("nope", List.of("x"), null));
        assertTrue(e.getMessage().contains("emit on undeclared stream 'nope'; declared streams are [d, default]"),
            e.getMessage());
        List<byte[]> frames = out.frames();
        assertEquals(1, frames.size(), "one data frame, to task 6");
    }

    @Test
    void aValueThatCannotCrossIsNamedWithItsTask() {
        SpoutCollector out = collector(plan());
        // These bolts are not Java: an Object reaches them as json-smart writes it ({}),
        // as Storm's ShellBolt sends it; json-smart cannot write a char[].
        out.emit("default", Arrays.asList(new Object(), 1), null);
        HostError e = assertThrows(HostError.class,
            () -> out.emit("default", Arrays.asList(new char[] {'x'}, 1), null));
        assertTrue(e.getMessage().startsWith("topology 'g', component 'src', task 15: emit on stream 'default' "
            + "refused, nothing of it sent: value #0 (field 'k') for task"), e.getMessage());
        assertTrue(e.getMessage().contains("expected JSON-like values"), e.getMessage());
        assertEquals(1, out.emitted);
    }

    @Test
    void theContextStormsClassesAnswer() {
        Plan plan = plan();
        StormView view = new StormView(plan, 8, 2, List.of(7, 8), "/code", "/pids");
        TopologyContext ctx = view.topologyContext(view.conf("fields", null));
        assertEquals(8, ctx.getThisTaskId());
        assertEquals("fields", ctx.getThisComponentId());
        assertEquals(1, ctx.getThisTaskIndex());
        assertEquals(List.of(7, 8, 9), ctx.getComponentTasks("fields"));
        assertEquals("src", ctx.getComponentId(15));
        assertEquals(Set.of(new GlobalStreamId("src", "default")), ctx.getThisSources().keySet());
        assertEquals(List.of("k"), ctx.getThisSources().get(new GlobalStreamId("src", "default")).get_fields());
        assertEquals(new HashSet<>(List.of("all", "custom", "fields", "global", "partial")),
            ctx.getTargets("src").get("default").keySet().stream().filter(c -> !c.startsWith("z"))
                .collect(java.util.stream.Collectors.toSet()));
        assertEquals(List.of(7, 8), ctx.getThisWorkerTasks());
        assertEquals(2, ctx.getThisWorkerPort());
        assertEquals("/code", ctx.getCodeDir());
        assertEquals("g-1", ctx.getStormId());
        Map<String, Object> conf = view.conf("fields", null);
        assertEquals(30, ((Number) conf.get("topology.message.timeout.secs")).intValue(), "Storm's defaults");
        assertEquals("ATLEAST_ONCE", conf.get("topology.reliability.mode"), "the topology's config");
        assertEquals(new ArrayList<>(List.of("k", "n")), ctx.getComponentOutputFields("src", "default").toList());
    }
}
