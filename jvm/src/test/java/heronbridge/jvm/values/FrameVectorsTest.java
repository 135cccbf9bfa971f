package heronbridge.jvm.values;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import heronbridge.jvm.Hex;
import heronbridge.jvm.wire.Frames;
import heronbridge.runtime.Control;
import heronbridge.runtime.TopologyOuterClass;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Records and frames as the Python runtime builds them (scripts/jvm_vectors.py), byte for byte. */
class FrameVectorsTest {
    static final Path VECTORS = Path.of("src/test/resources/frame_vectors.json");

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> section(String name) throws Exception {
        return (List<Map<String, Object>>) Hex.json(VECTORS).get(name);
    }

    @SuppressWarnings("unchecked")
    static byte[] encode(Codec codec, List<Object> records) {
        Codec.Batch batch = codec.batch();
        for (Object r : records) {
            List<Object> rec = (List<Object>) r;
            List<Object> values = (List<Object>) rec.get(0);
            if (rec.size() == 1) {
                batch.add(values, 0, 0, null);
            } else if (((Number) rec.get(1)).longValue() == Record.MULTI) {
                List<Object> raw = (List<Object>) rec.get(2);
                long[] pairs = new long[raw.size()];
                for (int i = 0; i < pairs.length; i++) {
                    pairs[i] = ((Number) raw.get(i)).longValue();
                }
                batch.add(values, Record.MULTI, 0, pairs);
            } else {
                batch.add(values, ((Number) rec.get(1)).longValue(), ((Number) rec.get(2)).longValue(), null);
            }
        }
        return batch.take();
    }

    @Test
    @SuppressWarnings("unchecked")
    void recordsAsPythonWritesThem() throws Exception {
        int checked = 0;
        for (Map<String, Object> v : section("records")) {
            Codec codec = Codec.named((String) v.get("serializer"));
            List<Object> records = (List<Object>) v.get("records");
            byte[] python = Hex.bytes(v.get("bytes"));
            assertEquals(v.get("bytes"), Hex.hex(encode(codec, records)), v.get("serializer") + " " + records);
            List<Record> decoded = codec.decode(python, 0, python.length);
            assertEquals(records.size(), decoded.size());
            for (int i = 0; i < decoded.size(); i++) {
                List<Object> rec = (List<Object>) records.get(i);
                assertEquals(normal(rec.get(0)), normal(decoded.get(i).values));
                if (rec.size() > 1) {
                    assertEquals(((Number) rec.get(1)).longValue(), decoded.get(i).root);
                }
            }
            checked++;
        }
        assertTrue(checked >= 10);
    }

    /** Numbers by value and kind (integral or not), lists and maps by content. */
    @SuppressWarnings("unchecked")
    static Object normal(Object v) {
        if (v instanceof Integer || v instanceof Long) {
            return ((Number) v).longValue();
        }
        if (v instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object x : (List<Object>) v) {
                out.add(normal(x));
            }
            return out;
        }
        if (v instanceof Map) {
            Map<Object, Object> out = new java.util.HashMap<>();
            for (Map.Entry<Object, Object> e : ((Map<Object, Object>) v).entrySet()) {
                out.put(e.getKey(), normal(e.getValue()));
            }
            return out;
        }
        return v;
    }

    @Test
    void msgpackIntegersKeepMultilangTypes() {
        Codec codec = new MsgpackCodec();
        Codec.Batch b = codec.batch();
        b.add(Arrays.asList(1, 1L << 33, -5, 2.0f, "s"), 0, 0, null);
        byte[] out = b.take();
        List<Object> values = codec.decode(out, 0, out.length).get(0).values;
        assertEquals(Integer.class, values.get(0).getClass());
        assertEquals(Long.class, values.get(1).getClass());
        assertEquals(Integer.class, values.get(2).getClass());
        assertEquals(Double.class, values.get(3).getClass());
    }

    @Test
    void aValueThatCannotCrossIsNamed() {
        for (Codec codec : new Codec[] {new MsgpackCodec(), new JsonCodec()}) {
            Codec.Batch b = codec.batch();
            b.add(List.of("ok"), 0, 0, null);
            Codec.BadValue e = assertThrows(Codec.BadValue.class,
                () -> b.add(List.of(new HashSet<>(List.of(1)).iterator()), 0, 0, null));
            assertTrue(e.getMessage().contains("java.util.HashMap$KeyIterator"), e.getMessage());
            assertEquals(1, b.count(), "the good record stays");
        }
    }

    @Test
    void framesAsPythonBuildsThem() throws Exception {
        Map<String, byte[]> f = new java.util.HashMap<>();
        for (Map<String, Object> v : section("frames")) {
            f.put((String) v.get("name"), Hex.bytes(v.get("bytes")));
        }
        long root = (7L << Frames.ROOT_TASK_SHIFT) | 12345;
        long edge = 0x5A5A5A5A5A5A5A5L;
        byte[] data = f.get("data");
        byte[] records = Arrays.copyOfRange(data, Frames.DATA_HEADER_SIZE, data.length);
        assertArrayEquals(data, Frames.dataFrame(12, 3, 5, records, records.length));
        assertArrayEquals(f.get("init"), Frames.intFrame(Frames.INIT, 3, new long[] {root, edge}, 2));
        assertArrayEquals(f.get("ack"), Frames.intFrame(Frames.ACK, 0, new long[] {root, edge, root + 1, 0}, 4));
        assertArrayEquals(f.get("fail"), Frames.intFrame(Frames.FAIL, 0, new long[] {root}, 1));
        assertArrayEquals(f.get("register"), Frames.controlFrame(Control.RegisterInstanceRequest.newBuilder()
            .setTopologyId("wordcount-0123456789ab").setTaskId(3).setPid(4242).build(), 0));
        assertArrayEquals(f.get("started"), Frames.controlFrame(
            Control.InstanceStarted.newBuilder().setTaskId(3).build(), 0));
        byte[] state = f.get("state");
        assertEquals(TopologyOuterClass.TopologyState.RUNNING,
            ((Control.TopologyStateChange) Frames.parseControl(state, 0, state.length)).getState());
        byte[] acked = f.get("acked");
        assertEquals(Frames.ACKED, Frames.kind(acked, 0));
        assertEquals(root + 1, Frames.i64(acked, Frames.HEADER_SIZE + 8));
    }
}
