package heronbridge.jvm.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import heronbridge.jvm.HostError;
import heronbridge.jvm.plan.Plan;
import heronbridge.jvm.plan.StormView;
import heronbridge.jvm.values.Codec;
import heronbridge.jvm.values.JsonCodec;
import heronbridge.jvm.values.MsgpackCodec;
import heronbridge.jvm.values.Record;
import heronbridge.jvm.values.StormKryo;
import heronbridge.runtime.TopologyOuterClass;
import heronbridge.runtime.TopologyOuterClass.ComponentDecl;
import heronbridge.runtime.TopologyOuterClass.ComponentKind;
import heronbridge.runtime.TopologyOuterClass.GroupingKind;
import heronbridge.runtime.TopologyOuterClass.InputDecl;
import heronbridge.runtime.TopologyOuterClass.StreamDecl;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ExtensionValue;
import org.msgpack.value.Value;

/**
 * Values that are not JSON-like, as Storm carries them: Storm's Kryo bytes (msgpack
 * extension 75) to a Java task, what Storm's multilang JSON makes of them to any other,
 * and a value neither can carry refused at the emit with nothing of it sent.
 */
class StormValuesTest {
    static final String JAVA = "{\"heronbridge.java.component\": {\"class\": \"x.Y\"}}";
    static final Date WHEN = new Date(1_700_000_000_000L);
    static final Point POINT = new Point("p", 3, WHEN, List.of("a", "b"), 1.5);

    // Tasks: jbolt=1 (Java), pybolt=2 (Python), src=3 (the Java spout).
    static final int JBOLT = 1;
    static final int PYBOLT = 2;
    static final int SRC = 3;

    static ComponentDecl.Builder bolt(String name, String conf) {
        return ComponentDecl.newBuilder().setName(name).setKind(ComponentKind.BOLT).setParallelism(1)
            .setClassPath(conf.isEmpty() ? "bolts:Py" : "java:x.Y").setConfigJson(conf)
            .addInputs(InputDecl.newBuilder().setComponent("src").setStream("default").setGrouping(GroupingKind.ALL));
    }

    static Plan plan(String topologyConf, String jboltConf) {
        return new Plan(TopologyOuterClass.Topology.newBuilder().setId("v-1").setName("v").setConfigJson(topologyConf)
            .addComponents(ComponentDecl.newBuilder().setName("src").setKind(ComponentKind.SPOUT).setParallelism(1)
                .setClassPath("java:src").setConfigJson(JAVA)
                .addOutputs(StreamDecl.newBuilder().setName("default").addFields("thing").addFields("n")))
            .addComponents(bolt("jbolt", jboltConf))
            .addComponents(bolt("pybolt", ""))
            .build());
    }

    static final String REGISTERED = "{\"topology.reliability.mode\": \"ATLEAST_ONCE\", "
        + "\"topology.kryo.register\": [\"heronbridge.jvm.task.Point\", \"java.util.Date\"]}";

    static StormKryo kryo(Plan plan) {
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.putAll(plan.config);
        List<Map<String, Object>> components = new ArrayList<>();
        for (ComponentDecl c : plan.components.values()) {
            components.add(Plan.parseConfig(c.getConfigJson(), plan.name, c.getName()));
        }
        return StormKryo.of(conf, components);
    }

    static SpoutCollector collector(Plan plan, Codec codec) {
        StormView view = new StormView(plan, SRC, 0, List.of(SRC), ".", ".");
        Map<String, Object> conf = view.conf("src", null);
        SpoutCollector out = new SpoutCollector(plan, SRC, codec, true, view.workerContext(conf), conf,
            StormValuesTest.class.getClassLoader());
        out.kryo = kryo(plan);
        return out;
    }

    static Emitter.Buffer buffer(Emitter out, int task) {
        return out.streams.get("default").byTask.get(task);
    }

    /** The records a task receives, read by a codec with the topology's Kryo (null: without one). */
    static List<Record> received(Emitter out, int task, Codec reader, StormKryo kryo) {
        byte[] bytes = buffer(out, task).batch.take();
        reader.readKryoWith(kryo);
        return reader.decode(bytes, 0, bytes.length);
    }

    @Test
    void aBeanReachesAJavaTaskInStormsKryoBytesAndAPythonTaskAsStormsMultilangJson() throws Exception {
        Plan plan = plan(REGISTERED, JAVA);
        assertEquals(java.util.Set.of("src", "jbolt"), plan.javaComponents);
        SpoutCollector out = collector(plan, new MsgpackCodec());
        out.emit("default", Arrays.asList(POINT, 7), 1);

        byte[] toJava = buffer(out, JBOLT).batch.take();
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(toJava)) {
            Value records = u.unpackValue();
            Value first = records.asArrayValue().get(0).asArrayValue().get(0).asArrayValue().get(0);
            assertTrue(first.isExtensionValue(), "a bean to a Java task is a msgpack extension: " + first);
            ExtensionValue ext = first.asExtensionValue();
            assertEquals(StormKryo.EXT, ext.getType());
            assertEquals(POINT, kryo(plan).read(ext.getData()), "Storm's Kryo bytes, readable by any task's Kryo");
        }
        MsgpackCodec reader = new MsgpackCodec();
        reader.readKryoWith(kryo(plan));
        List<Record> java = reader.decode(toJava, 0, toJava.length);
        assertEquals(Point.class, java.get(0).values.get(0).getClass());
        assertEquals(POINT, java.get(0).values.get(0));
        assertEquals(7, java.get(0).values.get(1));
        assertTrue(java.get(0).root != 0, "tracked as any tuple");

        List<Record> python = received(out, PYBOLT, new MsgpackCodec(), null);
        Map<String, Object> expected = new HashMap<>();
        expected.put("name", "p");
        expected.put("count", 3);
        expected.put("when", WHEN.toString());  // json-smart writes a Date as its toString()
        expected.put("tags", List.of("a", "b"));
        expected.put("weight", 1.5);  // a public field
        assertEquals(Arrays.asList(expected, 7), python.get(0).values);
    }

    @Test
    void aJavaTaskReadsCollectionsOfBeansAsTheSameClasses() {
        java.util.LinkedList<Object> list = new java.util.LinkedList<>(List.of(POINT, "x"));
        // Storm's Kryo registers ArrayList, HashMap and HashSet itself; a LinkedList, as a
        // bean, needs the topology's registration (without it, the emit is refused).
        HostError e = assertThrows(HostError.class, () -> collector(plan(REGISTERED, JAVA), new MsgpackCodec())
            .emit("default", Arrays.asList(list, WHEN), null));
        assertTrue(e.getMessage().contains("Class is not registered: java.util.LinkedList"), e.getMessage());
        Plan plan = plan("{\"topology.kryo.register\": [\"heronbridge.jvm.task.Point\", \"java.util.Date\", "
            + "\"java.util.LinkedList\"]}", JAVA);
        SpoutCollector out = collector(plan, new MsgpackCodec());
        out.emit("default", Arrays.asList(list, WHEN), null);
        List<Record> java = received(out, JBOLT, new MsgpackCodec(), kryo(plan));
        assertEquals(java.util.LinkedList.class, java.get(0).values.get(0).getClass());
        assertEquals(list, java.get(0).values.get(0));
        assertEquals(WHEN, java.get(0).values.get(1));
        List<Record> python = received(out, PYBOLT, new MsgpackCodec(), null);
        assertEquals(WHEN.toString(), python.get(0).values.get(1));
        assertEquals("x", ((List<?>) python.get(0).values.get(0)).get(1));
    }

    @Test
    void aClassStormsKryoRefusesIsRefusedAtTheEmitAndNothingAcceptedIsLost() {
        Plan plan = plan("{\"topology.reliability.mode\": \"ATLEAST_ONCE\"}", JAVA);  // Storm's defaults: no fallback
        SpoutCollector out = collector(plan, new MsgpackCodec());
        out.emit("default", Arrays.asList("fine", 1), 1);
        HostError e = assertThrows(HostError.class, () -> out.emit("default", Arrays.asList(POINT, 2), 2));
        String m = e.getMessage();
        assertTrue(m.startsWith("topology 'v', component 'src', task 3: emit on stream 'default' refused"), m);
        assertTrue(m.contains("value #0 (field 'thing') for task 1 of Java component 'jbolt' is "
            + "heronbridge.jvm.task.Point"), m);
        assertTrue(m.contains("Class is not registered: heronbridge.jvm.task.Point"), m);
        assertTrue(m.contains("expected " + Codec.EXPECTED), m);
        assertTrue(m.contains("topology.fall.back.on.java.serialization false"), m);
        assertEquals(1, out.emitted, "the refused emit is not counted");
        synchronized (out) {
            assertEquals(1, out.pending.size(), "nor tracked");
        }
        for (int task : new int[] {JBOLT, PYBOLT}) {
            List<Record> got = received(out, task, new MsgpackCodec(), kryo(plan));
            assertEquals(1, got.size(), "task " + task + " gets the accepted emit and nothing of the refused one");
            assertEquals(List.of("fine", 1), got.get(0).values);
        }
    }

    @Test
    void javaSerializationOnlyWhenTheTopologyTurnsStormsFallbackOn() {
        Plan plan = plan("{\"topology.fall.back.on.java.serialization\": true}", JAVA);
        SpoutCollector out = collector(plan, new MsgpackCodec());
        out.emit("default", Arrays.asList(POINT, 1), null);  // Serializable: Storm's SerializableSerializer
        assertEquals(POINT, received(out, JBOLT, new MsgpackCodec(), kryo(plan)).get(0).values.get(0));
        HostError e = assertThrows(HostError.class,
            () -> out.emit("default", Arrays.asList(new Point.Opaque(), 1), null));
        assertTrue(e.getMessage().contains("NotSerializableException"), e.getMessage());
        assertTrue(e.getMessage().contains("topology.fall.back.on.java.serialization true"), e.getMessage());
    }

    @Test
    void registrationsOfAnyComponentCountAsNimbusMergesThem() {
        Plan plan = plan("{}", "{\"heronbridge.java.component\": {\"class\": \"x.Y\"}, "
            + "\"topology.kryo.register\": [\"heronbridge.jvm.task.Point\", \"java.util.Date\"]}");
        SpoutCollector out = collector(plan, new MsgpackCodec());
        out.emit("default", Arrays.asList(POINT, 1), null);
        assertEquals(POINT, received(out, JBOLT, new MsgpackCodec(), kryo(plan)).get(0).values.get(0));
    }

    @Test
    void whatOnlyAPythonTaskReceivesNeedsNoKryo() {
        Plan plan = plan("{}", "");  // jbolt is not Java here
        assertEquals(java.util.Set.of("src"), plan.javaComponents);
        SpoutCollector out = collector(plan, new MsgpackCodec());
        out.emit("default", Arrays.asList(new Point.Opaque(), 1), null);
        assertEquals(Map.of("x", 1), received(out, PYBOLT, new MsgpackCodec(), null).get(0).values.get(0));
        HostError e = assertThrows(HostError.class,
            () -> out.emit("default", Arrays.asList(new char[] {'c'}, 1), null));
        assertTrue(e.getMessage().contains("for task 1 of component 'jbolt' is [C"), e.getMessage());
        assertTrue(e.getMessage().contains("json-smart (Storm's multilang JSON) cannot write it"), e.getMessage());
    }

    @Test
    void bytesAJavaTaskCannotReadFailTheirTupleAndTheRestOfTheBatchIsRead() {
        Plan plan = plan(REGISTERED, JAVA);
        SpoutCollector out = collector(plan, new MsgpackCodec());
        out.emit("default", Arrays.asList(POINT, 1), 1);
        out.emit("default", Arrays.asList("plain", 2), 2);
        StormKryo without = kryo(plan("{}", JAVA));  // a task whose Kryo lacks the registration
        List<Record> got = received(out, JBOLT, new MsgpackCodec(), without);
        assertEquals(2, got.size());
        assertNotNull(got.get(0).unreadable);
        assertTrue(got.get(0).unreadable.startsWith("value 0: expected Storm's Kryo bytes of a class this task's "
            + "Kryo reads (topology.kryo.register []"), got.get(0).unreadable);
        assertTrue(got.get(0).root != 0, "its root is read, so the tuple can be failed");
        assertNull(got.get(1).unreadable);
        assertEquals(List.of("plain", 2), got.get(1).values);
    }

    @Test
    void withTheJsonSerializerKryoBytesTravelAsBase64NamedByTheRecord() {
        Plan plan = plan(REGISTERED, JAVA);
        SpoutCollector out = collector(plan, new JsonCodec());
        out.emit("default", Arrays.asList(POINT, 1), null);
        out.emit("default", Arrays.asList(POINT, 2), 9);
        byte[] toJava = buffer(out, JBOLT).batch.take();
        String text = new String(toJava, StandardCharsets.UTF_8);
        assertTrue(text.matches("\\[\\[\\[\"[A-Za-z0-9+/=]+\",1\\],0,0,\\[0\\]\\],"
            + "\\[\\[\"[A-Za-z0-9+/=]+\",2\\],\\d+,\\d+,\\[0\\]\\]\\]"), text);
        JsonCodec reader = new JsonCodec();
        reader.readKryoWith(kryo(plan));
        List<Record> java = reader.decode(toJava, 0, toJava.length);
        assertEquals(Arrays.asList(POINT, 1), java.get(0).values);
        assertEquals(0, java.get(0).root);
        assertEquals(Arrays.asList(POINT, 2), java.get(1).values);
        assertTrue(java.get(1).root != 0);

        byte[] toPython = buffer(out, PYBOLT).batch.take();
        assertTrue(new String(toPython, StandardCharsets.UTF_8).startsWith("[[[{"), "JSON objects for Python");
        List<Record> python = new JsonCodec().decode(toPython, 0, toPython.length);
        assertEquals("p", ((Map<?, ?>) python.get(0).values.get(0)).get("name"));
    }

    @Test
    void charactersAndInfinitiesReachJavaAsThemselvesAndPythonAsJsonSmartWritesThem() {
        for (Codec codec : new Codec[] {new JsonCodec(), new MsgpackCodec()}) {
            Plan plan = plan(REGISTERED, JAVA);
            SpoutCollector out = collector(plan, codec);
            List<Object> nested = new ArrayList<>(Arrays.asList(Float.POSITIVE_INFINITY, 'z', 1.5));
            out.emit("default", Arrays.asList('c', Double.POSITIVE_INFINITY), null);
            out.emit("default", Arrays.asList(nested, Float.NEGATIVE_INFINITY), null);
            Codec reader = codec instanceof JsonCodec ? new JsonCodec() : new MsgpackCodec();
            List<Record> java = received(out, JBOLT, reader, kryo(plan));
            // Storm's Kryo between Java tasks: the same classes and values.
            assertEquals(Arrays.asList('c', Double.POSITIVE_INFINITY), java.get(0).values, codec.toString());
            assertEquals(Arrays.asList(nested, Float.NEGATIVE_INFINITY), java.get(1).values, codec.toString());
            // Storm's ShellBolt: json-smart writes a Character as {} (a bean with no
            // properties) and an infinity as null; the subprocess parses that.
            List<Record> python = received(out, PYBOLT, reader, null);
            assertEquals(Arrays.asList(Map.of(), null), python.get(0).values, codec.toString());
            assertEquals(Arrays.asList(Arrays.asList(null, Map.of(), 1.5), null), python.get(1).values,
                codec.toString());
        }
    }

    @Test
    void nanReachesAJavaTaskAndIsRefusedForAPythonOneWhoseReaderRejectsIt() {
        for (Codec codec : new Codec[] {new JsonCodec(), new MsgpackCodec()}) {
            SpoutCollector out = collector(plan(REGISTERED, JAVA), codec);
            List<Object> nested = new ArrayList<>(Arrays.asList("x", Float.NaN));
            HostError e = assertThrows(HostError.class, () -> out.emit("default", Arrays.asList("a", nested), 1));
            String m = e.getMessage();
            assertTrue(m.startsWith("topology 'v', component 'src', task 3: emit on stream 'default' refused, "
                + "nothing of it sent: value #1 (field 'n') for task 2 of component 'pybolt' is java.util.ArrayList"
                + " [x, NaN]"), m);
            assertTrue(m.contains("writes NaN, which pystorm's JSON reader refuses"), m);
            assertEquals(0, out.emitted, "the refused emit is not counted");
        }
    }

    @Test
    void aByteArrayAndNanReachAJavaTaskAndAByteArrayIsRefusedForAPythonOneWhoseShellBoltCannotWriteIt() {
        byte[] bytes = {1, 2, (byte) 255};
        for (Codec codec : new Codec[] {new JsonCodec(), new MsgpackCodec()}) {
            SpoutCollector out = collector(plan(REGISTERED, JAVA), codec);
            HostError e = assertThrows(HostError.class, () -> out.emit("default", Arrays.asList(bytes, 1), 1));
            String m = e.getMessage();
            assertTrue(m.startsWith("topology 'v', component 'src', task 3: emit on stream 'default' refused, "
                + "nothing of it sent: value #0 (field 'thing') for task 2 of component 'pybolt' is [B"), m);
            assertTrue(m.contains("json-smart (Storm's multilang JSON) cannot write it"), m);
            assertTrue(m.contains("ClassCastException"), m);
            assertEquals(0, out.emitted, "the refused emit is not counted");

            // To Java tasks only: Storm's Kryo (which registers byte[]) carries it, and NaN.
            Plan javaOnly = new Plan(TopologyOuterClass.Topology.newBuilder().setId("v-1").setName("v")
                .setConfigJson(REGISTERED)
                .addComponents(ComponentDecl.newBuilder().setName("src").setKind(ComponentKind.SPOUT)
                    .setParallelism(1).setClassPath("java:src").setConfigJson(JAVA)
                    .addOutputs(StreamDecl.newBuilder().setName("default").addFields("thing").addFields("n")))
                .addComponents(bolt("jbolt", JAVA))
                .addComponents(bolt("pybolt", "").clearInputs())  // there, so that task ids stay as above
                .build());
            SpoutCollector toJava = collector(javaOnly, codec);
            toJava.emit("default", Arrays.asList(bytes, Double.NaN), 1);
            Codec reader = codec instanceof JsonCodec ? new JsonCodec() : new MsgpackCodec();
            List<Object> got = received(toJava, JBOLT, reader, kryo(javaOnly)).get(0).values;
            assertTrue(got.get(0) instanceof byte[] && Arrays.equals(bytes, (byte[]) got.get(0)),
                () -> String.valueOf(got.get(0)));
            assertEquals(Double.NaN, got.get(1), "NaN too, as Storm's Kryo carries it");
        }
    }

    static Codec reader(Codec codec) {
        return codec instanceof JsonCodec ? new JsonCodec() : new MsgpackCodec();
    }

    static final String NUMBERS = "{\"topology.kryo.register\": [\"java.math.BigDecimal\"]}";

    /** Numbers of every class Storm's Kryo carries, each with the class a Java task must get back. */
    static final Object[] NUMBERS_EMITTED = {
        1.1f, (short) 3, (byte) -4, new BigDecimal("1.10"), new BigInteger("123"), BigInteger.ONE.shiftLeft(63),
        5L, -7L, 1L << 40, Long.MIN_VALUE, 7, Integer.MIN_VALUE, 2.5, -0.0, 0.12345678901234568,
        -1.2345678901234567, Double.MAX_VALUE, Double.MIN_VALUE,
    };

    @Test
    void numbersReachAJavaTaskAsTheClassTheSenderEmittedUnderBothSerializers() {
        for (Codec codec : new Codec[] {new JsonCodec(), new MsgpackCodec()}) {
            Plan plan = plan(NUMBERS, JAVA);
            SpoutCollector out = collector(plan, codec);
            for (Object v : NUMBERS_EMITTED) {
                out.emit("default", Arrays.asList(v, 1), null);
            }
            List<Record> java = received(out, JBOLT, reader(codec), kryo(plan));
            for (int i = 0; i < NUMBERS_EMITTED.length; i++) {
                Object sent = NUMBERS_EMITTED[i];
                Object got = java.get(i).values.get(0);
                String what = codec.getClass().getSimpleName() + ": " + Codec.describe(sent) + " arrived as "
                    + Codec.describe(got);
                assertEquals(sent.getClass(), got.getClass(), what);
                assertEquals(sent, got, what);
                assertEquals(Integer.class, java.get(i).values.get(1).getClass(), what);
            }
        }
    }

    @Test
    void numbersInsideListsAndMapsKeepTheirClassToAJavaTask() {
        for (Codec codec : new Codec[] {new JsonCodec(), new MsgpackCodec()}) {
            Plan plan = plan(NUMBERS, JAVA);
            SpoutCollector out = collector(plan, codec);
            HashMap<String, Object> inner = new HashMap<>();
            inner.put("s", (short) 2);
            inner.put("d", new BigDecimal("0.5"));
            inner.put("l", 9L);
            List<Object> list = new ArrayList<>(Arrays.asList("x", 1.5f, (byte) 8, inner, 3));
            HashMap<String, Object> map = new HashMap<>();
            map.put("f", -2.25f);
            map.put("list", new ArrayList<>(Arrays.asList(1, 2L)));
            out.emit("default", Arrays.asList(list, map), null);
            List<Object> got = received(out, JBOLT, reader(codec), kryo(plan)).get(0).values;
            String name = codec.getClass().getSimpleName();
            assertEquals(Arrays.asList(list, map), got, name);
            List<?> gotList = (List<?>) got.get(0);
            assertEquals(ArrayList.class, gotList.getClass(), name);
            assertEquals(Float.class, gotList.get(1).getClass(), name);
            assertEquals(Byte.class, gotList.get(2).getClass(), name);
            Map<?, ?> gotInner = (Map<?, ?>) gotList.get(3);
            assertEquals(HashMap.class, gotInner.getClass(), name);
            assertEquals(Short.class, gotInner.get("s").getClass(), name);
            assertEquals(BigDecimal.class, gotInner.get("d").getClass(), name);
            assertEquals(Long.class, gotInner.get("l").getClass(), name);
            Map<?, ?> gotMap = (Map<?, ?>) got.get(1);
            assertEquals(Float.class, gotMap.get("f").getClass(), name);
            assertEquals(Long.class, ((List<?>) gotMap.get("list")).get(1).getClass(), name);
        }
    }

    @Test
    void aPythonTaskGetsNumbersAsStormsMultilangJsonWritesThem() {
        for (Codec codec : new Codec[] {new JsonCodec(), new MsgpackCodec()}) {
            Plan plan = plan(NUMBERS, JAVA);
            SpoutCollector out = collector(plan, codec);
            out.emit("default", Arrays.asList(new ArrayList<>(Arrays.asList(1.1f, (short) 3, (byte) -4,
                new BigDecimal("1.10"))), 1.1f), null);
            // json-smart writes a Float as its decimal text (1.1, not 1.100000023841858), a
            // BigDecimal as its text, a Short and a Byte as integers.
            List<Object> python = received(out, PYBOLT, reader(codec), null).get(0).values;
            assertEquals(Arrays.asList(Arrays.asList(1.1, 3, -4, 1.1), 1.1), python,
                codec.getClass().getSimpleName());
        }
    }

    @Test
    void theCommonValuesCrossAsThemselvesWithoutKryo() throws Exception {
        HashMap<String, Object> map = new HashMap<>();
        map.put("k", new ArrayList<>(Arrays.asList("v", 2, 3L, 0.5, true, null)));
        List<Object> values = Arrays.asList(map, new ArrayList<>(Arrays.asList(1, 1L << 40, -5L, 2.5)));
        SpoutCollector out = collector(plan(NUMBERS, JAVA), new MsgpackCodec());
        out.emit("default", values, null);
        Record rec = received(out, JBOLT, new MsgpackCodec(), null).get(0);
        assertNull(rec.unreadable, "no Kryo bytes, which a reader without Kryo cannot read");
        List<Object> got = rec.values;
        assertEquals(values, got);
        List<?> numbers = (List<?>) got.get(1);
        assertEquals(Arrays.asList(Integer.class, Long.class, Long.class, Double.class),
            Arrays.asList(numbers.get(0).getClass(), numbers.get(1).getClass(), numbers.get(2).getClass(),
                numbers.get(3).getClass()));
        assertEquals(Long.class, ((List<?>) ((Map<?, ?>) got.get(0)).get("k")).get(2).getClass());

        // JSON: plain text, no positions of Kryo bytes, unless a Long fits 32 bits (json-smart
        // reads it as an Integer) or a Double's text is longer than 18 characters (a BigDecimal).
        SpoutCollector json = collector(plan(NUMBERS, JAVA), new JsonCodec());
        json.emit("default", Arrays.asList(new ArrayList<>(Arrays.asList("v", 2, 1L << 40, 0.5, true, null)),
            "s"), null);
        json.emit("default", Arrays.asList(3L, 0.12345678901234568), null);
        String text = new String(buffer(json, JBOLT).batch.take(), StandardCharsets.UTF_8);
        assertTrue(text.startsWith("[[[[\"v\",2,1099511627776,0.5,true,null],\"s\"]],[[\""), text);
        assertTrue(text.endsWith("\"],0,0,[0,1]]]"), text);
    }

    @Test
    void listsAndMapsOfOtherClassesCrossAsStormsKryoCarriesThem() {
        java.util.LinkedList<Object> linked = new java.util.LinkedList<>(List.of("a", 1));
        java.util.TreeMap<String, Object> tree = new java.util.TreeMap<>(Map.of("k", 1, "j", "x"));
        for (Codec codec : new Codec[] {new JsonCodec(), new MsgpackCodec()}) {
            String name = codec.getClass().getSimpleName();
            // Storm's Kryo registers neither (nor List.of's class, nor BigDecimal): refused, as between workers.
            for (Object v : new Object[] {linked, tree, List.of("a"), new BigDecimal("1")}) {
                SpoutCollector out = collector(plan("{}", JAVA), codec);
                HostError e = assertThrows(HostError.class, () -> out.emit("default", Arrays.asList(v, 1), null));
                assertTrue(e.getMessage().contains("Class is not registered: " + v.getClass().getName()),
                    name + ": " + e.getMessage());
            }
            Plan plan = plan("{\"topology.kryo.register\": [\"java.util.LinkedList\", \"java.util.TreeMap\"]}",
                JAVA);
            SpoutCollector out = collector(plan, codec);
            out.emit("default", Arrays.asList(linked, tree), null);
            List<Object> got = received(out, JBOLT, reader(codec), kryo(plan)).get(0).values;
            assertEquals(java.util.LinkedList.class, got.get(0).getClass(), name);
            assertEquals(java.util.TreeMap.class, got.get(1).getClass(), name);
            assertEquals(Arrays.asList(linked, tree), got, name);
            assertEquals(Arrays.asList(List.of("a", 1), Map.of("k", 1, "j", "x")),
                received(out, PYBOLT, reader(codec), null).get(0).values, name);
        }
    }

    @Test
    void aShellBoltsJsonSmartListsAndObjectsReachAJavaTaskAsArrayListsAndHashMaps() {
        Object parsed = org.apache.storm.shade.net.minidev.json.JSONValue.parse("[[1,{\"a\":[2]}]]");
        for (Codec codec : new Codec[] {new JsonCodec(), new MsgpackCodec()}) {
            Plan plan = plan("{}", JAVA);  // no registrations: Storm's Kryo would refuse json-smart's classes
            SpoutCollector out = collector(plan, codec);
            out.emit("default", Arrays.asList(((List<?>) parsed).get(0), 1), null);
            Record rec = received(out, JBOLT, reader(codec), null).get(0);
            assertNull(rec.unreadable, "crossed natively, no Kryo bytes");
            List<?> got = (List<?>) rec.values.get(0);
            assertEquals(ArrayList.class, got.getClass());
            assertEquals(HashMap.class, got.get(1).getClass());
            assertEquals(Arrays.asList(1, Map.of("a", List.of(2))), got);
        }
    }

    @Test
    void jsonRecordsFromPythonReadAsArrayListsAndHashMaps() {
        byte[] text = "[[[[1,[2]],{\"a\":{\"b\":[]}}]]]".getBytes(StandardCharsets.UTF_8);
        List<Object> got = new JsonCodec().decode(text, 0, text.length).get(0).values;
        assertEquals(ArrayList.class, got.getClass());
        assertEquals(ArrayList.class, got.get(0).getClass());
        assertEquals(ArrayList.class, ((List<?>) got.get(0)).get(1).getClass());
        assertEquals(HashMap.class, got.get(1).getClass());
        assertEquals(HashMap.class, ((Map<?, ?>) got.get(1)).get("a").getClass());
        assertEquals(ArrayList.class, ((Map<?, ?>) ((Map<?, ?>) got.get(1)).get("a")).get("b").getClass());
    }

    @Test
    void tracesShowABeanAsStormsMultilangJson() {
        assertEquals("[{\"count\":3,\"name\":\"p\",\"tags\":[\"a\",\"b\"],\"weight\":1.5,\"when\":\""
                + WHEN + "\"},1]",
            new String(JsonCodec.canonicalValues(Arrays.asList(POINT, 1)), StandardCharsets.UTF_8));
        // What only a Java task can receive is traced too: bytes as base64, NaN as NaN.
        assertEquals("[\"AQL/\",NaN,{},null]", new String(JsonCodec.canonicalValues(
            Arrays.asList(new byte[] {1, 2, (byte) 255}, Double.NaN, 'c', Double.NEGATIVE_INFINITY)),
            StandardCharsets.UTF_8));
    }
}
