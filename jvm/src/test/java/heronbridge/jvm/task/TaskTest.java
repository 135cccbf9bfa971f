package heronbridge.jvm.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import heronbridge.jvm.values.Codec;
import heronbridge.jvm.values.MsgpackCodec;
import heronbridge.jvm.values.Record;
import heronbridge.jvm.wire.Frames;
import heronbridge.jvm.wire.Identity;
import heronbridge.runtime.Control;
import heronbridge.runtime.Plans;
import heronbridge.runtime.TopologyOuterClass;
import heronbridge.runtime.TopologyOuterClass.ComponentDecl;
import heronbridge.runtime.TopologyOuterClass.ComponentKind;
import heronbridge.runtime.TopologyOuterClass.GroupingKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Java task against a stream manager's socket: the JVM host registers, runs Storm's own
 * test components (storm-client's org.apache.storm.testing), acks by XOR, refuses a listener
 * that cannot prove the secret, and names topology, component and task in its errors.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TaskTest {
    static final String TOPOLOGY_ID = "wc-0123456789ab";
    static final byte[] SECRET = new byte[32];

    @TempDir
    Path dir;
    FakeStreamManager stmgr;
    ExecutorService pool;

    @BeforeEach
    void start() throws Exception {
        stmgr = new FakeStreamManager(dir);
        pool = Executors.newCachedThreadPool();
    }

    @AfterEach
    void stop() throws Exception {
        stmgr.close();
        pool.shutdownNow();
    }

    static String javaSpec(String cls, String args) {
        return "{\"heronbridge.java.component\": {\"class\": \"" + cls + "\", \"args\": [" + args + "]}}";
    }

    /** words (a spout) -> count (fields on word) -> sink; __acker reserved: tasks __acker=1, count=2, sink=3, words=4. */
    static TopologyOuterClass.Topology topology(String spoutConf, String countConf, String reliability) {
        return TopologyOuterClass.Topology.newBuilder().setId(TOPOLOGY_ID).setName("wc")
            .setConfigJson("{\"topology.reliability.mode\": \"" + reliability + "\"}")
            .addReserved(TopologyOuterClass.ReservedComponent.newBuilder().setName("__acker").setTasks(1))
            .addComponents(ComponentDecl.newBuilder().setName("words").setKind(ComponentKind.SPOUT).setParallelism(1)
                .setClassPath("java:words").setConfigJson(spoutConf)
                .addOutputs(TopologyOuterClass.StreamDecl.newBuilder().setName("default").addFields("word")))
            .addComponents(ComponentDecl.newBuilder().setName("count").setKind(ComponentKind.BOLT).setParallelism(1)
                .setClassPath("java:count").setConfigJson(countConf)
                .addInputs(TopologyOuterClass.InputDecl.newBuilder().setComponent("words").setStream("default")
                    .setGrouping(GroupingKind.FIELDS).addFields("word"))
                .addOutputs(TopologyOuterClass.StreamDecl.newBuilder().setName("default").addFields("word")
                    .addFields("count")))
            .addComponents(ComponentDecl.newBuilder().setName("sink").setKind(ComponentKind.BOLT).setParallelism(1)
                .setClassPath("sinks:Sink")
                .addInputs(TopologyOuterClass.InputDecl.newBuilder().setComponent("count").setStream("default")
                    .setGrouping(GroupingKind.SHUFFLE)))
            .build();
    }

    static final String SPOUT = javaSpec("org.apache.storm.testing.TestWordSpout", "");
    static final String COUNTER = javaSpec("org.apache.storm.testing.TestWordCounter", "");

    Identity identity() {
        return Identity.unix(TOPOLOGY_ID, "stmgr-0", stmgr.path.toString());
    }

    Future<Integer> run(int taskId, Task[] holder) {
        Task task = new Task(TOPOLOGY_ID, taskId, 0, identity(), dir.resolve("metrics.sock").toString(), SECRET, 0,
            dir.toString());
        holder[0] = task;
        return pool.submit(task::run);
    }

    /** Accept the task, check its registration, and send the physical plan. */
    void register(int taskId, TopologyOuterClass.Topology topology) throws Exception {
        assertTrue(stmgr.accept(SECRET, identity().encode()));
        byte[] f = stmgr.frame(Frames.CONTROL);
        assertEquals(Frames.CONTROL, Frames.kind(f, 0));
        Plans.PhysicalPlan.Builder pplan = Plans.PhysicalPlan.newBuilder().setTopology(topology);
        for (int t = 2; t <= 4; t++) {
            pplan.addInstances(Plans.InstanceInfo.newBuilder().setTaskId(t).setStmgrId("stmgr-0"));
        }
        stmgr.write(Frames.controlFrame(Control.RegisterInstanceResponse.newBuilder()
            .setStatus(Control.Status.newBuilder().setOk(true)).setPplan(pplan).build(), 0));
    }

    /** The counter's task (2) with `countConf` as its component, registered and started. */
    Future<Integer> startBolt(Task[] task, String countConf) throws Exception {
        Future<Integer> done = run(2, task);
        register(2, topology(SPOUT, countConf, "ATLEAST_ONCE"));
        stmgr.frame(Frames.CONTROL);  // InstanceStarted
        return done;
    }

    @Test
    void stormsTestWordCounterCountsAndAcksByXor() throws Exception {
        Task[] task = new Task[1];
        Future<Integer> done = startBolt(task, COUNTER);
        Codec codec = new MsgpackCodec();
        Codec.Batch batch = codec.batch();
        long root = (4L << Frames.ROOT_TASK_SHIFT) | 99;
        long[] edges = {0x1111L, 0x2222L, 0x3333L};
        String[] words = {"apple", "pear", "apple"};
        for (int i = 0; i < 3; i++) {
            batch.add(List.of(words[i]), root + i, edges[i], null);
        }
        byte[] records = batch.take();
        stmgr.write(Frames.dataFrame(2, 4, 1, records, records.length));  // stream #1: words/default
        byte[] data = stmgr.frame(Frames.DATA);
        assertEquals(3, Frames.u32(data, 5), "to the sink's task");
        assertEquals(2, Frames.u32(data, Frames.HEADER_SIZE), "from the counter's task");
        List<Record> out = codec.decode(data, Frames.DATA_HEADER_SIZE, data.length - Frames.DATA_HEADER_SIZE);
        List<List<Object>> values = new ArrayList<>();
        for (Record r : out) {
            values.add(r.values);
        }
        assertEquals(List.of(List.of("apple", 1), List.of("pear", 1), List.of("apple", 2)), values);
        byte[] acks = stmgr.frame(Frames.ACK);
        assertEquals(6 * 8, acks.length - Frames.HEADER_SIZE);
        for (int i = 0; i < 3; i++) {
            assertEquals(root + i, out.get(i).root, "the emit is anchored (BasicBoltExecutor)");
            long ackRoot = Frames.i64(acks, Frames.HEADER_SIZE + 16 * i);
            long ackValue = Frames.i64(acks, Frames.HEADER_SIZE + 16 * i + 8);
            assertEquals(root + i, ackRoot);
            // The tree's XOR: the spout's edge, this ack, and the child's own ack cancel out.
            assertEquals(0, edges[i] ^ ackValue ^ out.get(i).edge);
            assertNotEquals(0, out.get(i).edge);
        }
        task[0].stop();
        assertEquals(0, done.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aValueItsKryoCannotReadFailsItsTupleAndTheRestOfTheFrameRuns() throws Exception {
        Task[] task = new Task[1];
        Future<Integer> done = startBolt(task, COUNTER);
        // Storm's Kryo bytes from a Kryo with a registration this topology's lacks.
        java.util.Map<String, Object> conf = new java.util.HashMap<>(org.apache.storm.utils.Utils.readDefaultConfig());
        conf.put("topology.kryo.register", List.of(Point.class.getName(), "java.util.Date"));
        byte[] foreign = heronbridge.jvm.values.StormKryo.of(conf, List.of()).write(StormValuesTest.POINT);
        Codec codec = new MsgpackCodec();
        Codec.Batch batch = codec.batch();
        long root = (4L << Frames.ROOT_TASK_SHIFT) | 7;
        batch.add(List.of(new Codec.KryoBytes(foreign)), root, 0x10L, null);
        batch.add(List.of("apple"), root + 1, 0x20L, null);
        byte[] records = batch.take();
        stmgr.write(Frames.dataFrame(2, 4, 1, records, records.length));
        byte[] data = stmgr.frame(Frames.DATA);
        List<Record> out = codec.decode(data, Frames.DATA_HEADER_SIZE, data.length - Frames.DATA_HEADER_SIZE);
        assertEquals(1, out.size());
        assertEquals(List.of("apple", 1), out.get(0).values, "the next tuple of the frame ran");
        byte[] acks = stmgr.frame(Frames.ACK);
        assertEquals(root + 1, Frames.i64(acks, Frames.HEADER_SIZE));
        byte[] fails = stmgr.frame(Frames.FAIL);
        assertEquals(root, Frames.i64(fails, Frames.HEADER_SIZE), "the unreadable tuple is failed, not executed");
        assertEquals(1, task[0].emitter.errorsReported);
        task[0].stop();
        assertEquals(0, done.get(10, TimeUnit.SECONDS));
    }

    @Test
    void stormsAutoTaskHooksSeeWhatStormsExecutorsShowThem() throws Exception {
        RecordingHook.EVENTS.clear();
        Task[] task = new Task[1];
        Future<Integer> done = startBolt(task, "{\"heronbridge.java.component\": {\"class\": "
            + "\"org.apache.storm.testing.TestWordCounter\", \"args\": []}, \"topology.auto.task.hooks\": [\""
            + RecordingHook.class.getName() + "\"]}");
        Codec codec = new MsgpackCodec();
        Codec.Batch batch = codec.batch();
        long root = (4L << Frames.ROOT_TASK_SHIFT) | 7;
        batch.add(List.of("apple"), root, 0x1111L, null);
        batch.add(List.of("apple"), root + 1, 0x2222L, null);
        byte[] records = batch.take();
        stmgr.write(Frames.dataFrame(2, 4, 1, records, records.length));
        stmgr.frame(Frames.DATA);
        stmgr.frame(Frames.ACK);
        task[0].stop();
        assertEquals(0, done.get(10, TimeUnit.SECONDS));
        // BasicBoltExecutor emits and acks inside execute; Storm's executor reports the execute after it returns.
        assertEquals(List.of("prepare count 2",
            "emit default [apple, 1] from 2 to [3]", "ack [apple]", "execute default [apple] by 2",
            "emit default [apple, 2] from 2 to [3]", "ack [apple]", "execute default [apple] by 2",
            "cleanup"), RecordingHook.EVENTS);
    }

    @Test
    void aTaskHookThatIsNotOneIsNamed() throws Exception {
        String err = failure("{\"heronbridge.java.component\": {\"class\": "
            + "\"org.apache.storm.testing.TestWordCounter\", \"args\": []}, \"topology.auto.task.hooks\": "
            + "[\"java.lang.String\"]}");
        assertTrue(err.contains("topology 'wc', component 'count', task 2: expected a task hook "
            + "(org.apache.storm.hooks.ITaskHook), received a java.lang.String"), err);
    }

    @Test
    void aWindowedBoltRunsThroughStormsWindowedBoltExecutor() throws Exception {
        Task[] task = new Task[1];
        Future<Integer> done = startBolt(task, javaSpec(PairWindowBolt.class.getName(), ""));
        Codec codec = new MsgpackCodec();
        Codec.Batch batch = codec.batch();
        long root = (4L << Frames.ROOT_TASK_SHIFT) | 7;
        long[] edges = {0x10L, 0x20L, 0x30L, 0x40L};
        for (int i = 0; i < 4; i++) {
            batch.add(List.of("w" + i), root + i, edges[i], null);
        }
        byte[] records = batch.take();
        stmgr.write(Frames.dataFrame(2, 4, 1, records, records.length));
        List<Record> out = new ArrayList<>();
        while (out.size() < 2) {
            byte[] data = stmgr.frame(Frames.DATA);
            out.addAll(codec.decode(data, Frames.DATA_HEADER_SIZE, data.length - Frames.DATA_HEADER_SIZE));
        }
        assertEquals(List.of("w0+w1", 2), out.get(0).values);
        assertEquals(List.of("w2+w3", 2), out.get(1).values);
        for (int w = 0; w < 2; w++) {
            Record r = out.get(w);
            assertEquals(Record.MULTI, r.root, "anchored to both tuples of its window: two roots");
            assertEquals(List.of(root + 2 * w, root + 2 * w + 1), List.of(r.pairs[1], r.pairs[3]));
        }
        // Each input's ack cancels its spout edge and the window's emit (Storm's XOR rule).
        java.util.Map<Long, Long> child = new java.util.HashMap<>();
        for (Record r : out) {
            child.put(r.pairs[1], r.pairs[2]);
            child.put(r.pairs[3], r.pairs[4]);
        }
        java.util.Set<Long> acked = new java.util.HashSet<>();
        while (!acked.containsAll(List.of(root, root + 1))) {
            byte[] acks = stmgr.frame(Frames.ACK);
            for (int at = Frames.HEADER_SIZE; at < acks.length; at += 16) {
                long r = Frames.i64(acks, at);
                int i = (int) (r - root);
                assertEquals(0, edges[i] ^ Frames.i64(acks, at + 8) ^ child.get(r), "root +" + i);
                acked.add(r);
            }
        }
        task[0].stop();
        assertEquals(0, done.get(10, TimeUnit.SECONDS));
    }

    /** A multilang bolt (Storm's protocol): each word upper-cased, emitted anchored, then acked. */
    static final String UPPER = String.join("\n",
        "import json, os, sys",
        "def read():",
        "    lines = []",
        "    while True:",
        "        line = sys.stdin.readline()",
        "        if not line: sys.exit(0)",
        "        if line.strip() == 'end': return json.loads(''.join(lines))",
        "        lines.append(line)",
        "def send(msg):",
        "    sys.stdout.write(json.dumps(msg) + '\\nend\\n'); sys.stdout.flush()",
        "setup = read()",
        "open(os.path.join(setup['pidDir'], str(os.getpid())), 'w').close()",
        "send({'pid': os.getpid()})",
        "while True:",
        "    t = read()",
        "    if isinstance(t, list): continue",
        "    if t.get('stream') == '__heartbeat': send({'command': 'sync'}); continue",
        "    send({'command': 'emit', 'anchors': [t['id']], 'tuple': [t['tuple'][0].upper(), 1]})",
        "    send({'command': 'ack', 'id': t['id']})",
        "");

    @Test
    void stormsShellBoltRunsItsMultilangSubprocess() throws Exception {
        java.nio.file.Files.writeString(dir.resolve("upper.py"), UPPER);
        Task[] task = new Task[1];
        Future<Integer> done = startBolt(task, javaSpec(UpperShellBolt.class.getName(), ""));
        Codec codec = new MsgpackCodec();
        Codec.Batch batch = codec.batch();
        long root = (4L << Frames.ROOT_TASK_SHIFT) | 5;
        batch.add(List.of("shell"), root, 0x77L, null);
        byte[] records = batch.take();
        stmgr.write(Frames.dataFrame(2, 4, 1, records, records.length));
        byte[] data = stmgr.frame(Frames.DATA);
        Record r = codec.decode(data, Frames.DATA_HEADER_SIZE, data.length - Frames.DATA_HEADER_SIZE).get(0);
        assertEquals(List.of("SHELL", 1), r.values);
        assertEquals(root, r.root);
        byte[] acks = stmgr.frame(Frames.ACK);
        assertEquals(root, Frames.i64(acks, Frames.HEADER_SIZE));
        assertEquals(0, 0x77L ^ Frames.i64(acks, Frames.HEADER_SIZE + 8) ^ r.edge);
        task[0].stop();
        assertEquals(0, done.get(20, TimeUnit.SECONDS));
    }

    @Test
    void stormsTestWordSpoutEmitsOnceActivated() throws Exception {
        Task[] task = new Task[1];
        Future<Integer> done = run(4, task);
        register(4, topology(SPOUT, COUNTER, "ATLEAST_ONCE"));
        stmgr.frame(Frames.CONTROL);  // InstanceStarted
        stmgr.write(Frames.controlFrame(Control.TopologyStateChange.newBuilder()
            .setState(TopologyOuterClass.TopologyState.RUNNING).build(), 0));
        byte[] data = stmgr.frame(Frames.DATA);
        assertEquals(2, Frames.u32(data, 5), "to the counter's task");
        List<Record> out = new MsgpackCodec().decode(data, Frames.DATA_HEADER_SIZE,
            data.length - Frames.DATA_HEADER_SIZE);
        assertEquals(0, out.get(0).root, "TestWordSpout emits without a message id: untracked");
        assertTrue(List.of("nathan", "mike", "jackson", "golda", "bertels").contains(out.get(0).values.get(0)));
        task[0].stop();
        assertEquals(0, done.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aTrackedEmitIsInitedThenAckedOrFailed() throws Exception {
        AckedSpout.ACKED.clear();
        AckedSpout.FAILED.clear();
        Task[] task = new Task[1];
        Future<Integer> done = run(4, task);
        register(4, topology(javaSpec(AckedSpout.class.getName(), "{\"long\": 2}"), COUNTER, "ATLEAST_ONCE"));
        stmgr.frame(Frames.CONTROL);  // InstanceStarted
        stmgr.write(Frames.controlFrame(Control.TopologyStateChange.newBuilder()
            .setState(TopologyOuterClass.TopologyState.RUNNING).build(), 0));
        List<Long> roots = new ArrayList<>();
        while (roots.size() < 2) {
            byte[] init = stmgr.frame(Frames.INIT);
            byte[] data = stmgr.frame(Frames.DATA);
            List<Record> out = new MsgpackCodec().decode(data, Frames.DATA_HEADER_SIZE,
                data.length - Frames.DATA_HEADER_SIZE);
            for (int i = 0; i < out.size(); i++) {
                long root = Frames.i64(init, Frames.HEADER_SIZE + 16 * i);
                assertEquals(root, out.get(i).root);
                assertEquals(4, root >>> Frames.ROOT_TASK_SHIFT, "the root names its spout task");
                assertEquals(Frames.i64(init, Frames.HEADER_SIZE + 16 * i + 8), out.get(i).edge,
                    "one copy: its edge is the init's XOR");
                roots.add(root);
            }
        }
        stmgr.write(Frames.intFrame(Frames.ACKED, 4, new long[] {roots.get(0)}, 1),
            Frames.intFrame(Frames.EXPIRED, 4, new long[] {roots.get(1), 12345}, 2));
        long deadline = System.nanoTime() + 10_000_000_000L;
        while ((AckedSpout.ACKED.isEmpty() || AckedSpout.FAILED.isEmpty()) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(List.of("id-0"), AckedSpout.ACKED);
        assertEquals(List.of("id-1"), AckedSpout.FAILED, "an expired tree fails; an unknown root is ignored");
        task[0].stop();
        assertEquals(0, done.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aListenerWithoutTheSecretIsRefusedBeforeAnyFrame() throws Exception {
        Task[] task = new Task[1];
        Future<Integer> done = run(2, task);
        byte[] wrong = new byte[32];
        wrong[0] = 1;
        assertFalse(stmgr.accept(wrong, identity().encode()));
        assertTrue(stmgr.refusedProof, "the task hung up instead of proving itself to an impostor");
        assertEquals(Task.EXIT_LOST_STREAM_MANAGER, done.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aListenerOfAnotherIdentityIsRefused() throws Exception {
        Task[] task = new Task[1];
        Future<Integer> done = run(2, task);
        assertFalse(stmgr.accept(SECRET, identityOf("stmgr-1").encode()));
        assertEquals(Task.EXIT_LOST_STREAM_MANAGER, done.get(10, TimeUnit.SECONDS));
    }

    Identity identityOf(String name) {
        return Identity.unix(TOPOLOGY_ID, name, stmgr.path.toString());
    }

    String failure(String countConf) throws Exception {
        PrintStream old = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true));
        try {
            Task[] task = new Task[1];
            Future<Integer> done = run(2, task);
            register(2, topology(SPOUT, countConf, "ATLEAST_ONCE"));
            assertEquals(Task.EXIT_COMPONENT_ERROR, done.get(20, TimeUnit.SECONDS));
        } finally {
            System.setErr(old);
        }
        return err.toString();
    }

    @Test
    void aClassNotOnTheClasspathIsNamed() throws Exception {
        String err = failure(javaSpec("com.example.NoSuchBolt", ""));
        assertTrue(err.contains("topology 'wc', component 'count', task 2: expected a class on the task's classpath, "
            + "received 'com.example.NoSuchBolt'"), err);
    }

    @Test
    void aConstructorThatDoesNotTakeTheArgsIsNamed() throws Exception {
        String err = failure(javaSpec("org.apache.storm.testing.TestWordCounter", "{\"long\": 5}, {\"string\": \"x\"}"));
        assertTrue(err.contains("topology 'wc', component 'count', task 2: expected a public constructor of "
            + "org.apache.storm.testing.TestWordCounter taking (Long, String) for args_list [5, 'x'], received a class "
            + "whose public constructors take ()"), err);
    }

    @Test
    void aPrepareThatThrowsIsNamed() throws Exception {
        String err = failure(javaSpec(ThrowingBolt.class.getName(), "{\"string\": \"no database\"}"));
        assertTrue(err.contains("topology 'wc', component 'count', task 2: prepare raised java.lang.IllegalStateException:"
            + " no database"), err);
    }
}
