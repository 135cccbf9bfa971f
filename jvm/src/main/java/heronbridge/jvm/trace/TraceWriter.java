package heronbridge.jvm.trace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * One task's conformance trace file, in the format the suite reads
 * (src/heronbridge/conformance/trace/tracefile.py): the magic, a frame with the file's head,
 * then one frame per block (a head summing the task up so far, and its records as one
 * msgpack array). Each frame goes out in one write, so that a reader never sees half of one
 * unless the process died writing it.
 */
public final class TraceWriter implements AutoCloseable {
    static final byte[] MAGIC = "HBTRACE1".getBytes(StandardCharsets.US_ASCII);

    private final FileChannel out;

    /** Create `path` (readable by its owner only) with the file head `head`, an ordered map. */
    public TraceWriter(Path path, Map<String, ?> head) throws IOException {
        out = FileChannel.open(path, EnumSet.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        byte[] first = frame(head, new byte[0]);
        write(ByteBuffer.allocate(MAGIC.length + first.length).put(MAGIC).put(first).flip());
    }

    /** One block: `head` (ordered: tracefile.Head's fields) and its records, each laid out as tracefile.FIELDS. */
    public void block(Map<String, ?> head, List<?> rows) throws IOException {
        write(ByteBuffer.wrap(frame(head, pack(rows))));
    }

    @Override
    public void close() throws IOException {
        out.close();
    }

    private void write(ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            out.write(buf);
        }
    }

    static byte[] frame(Map<String, ?> head, byte[] body) throws IOException {
        byte[] h = pack(head);
        return ByteBuffer.allocate(8 + h.length + body.length).order(ByteOrder.LITTLE_ENDIAN)
            .putInt(h.length).putInt(body.length).put(h).put(body).array();
    }

    /** msgpack as msgspec writes the same Python values: ints as small as they fit, floats as float64. */
    static byte[] pack(Object value) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            value(p, value);
            return p.toByteArray();
        }
    }

    private static void value(MessagePacker p, Object v) throws IOException {
        if (v == null) {
            p.packNil();
        } else if (v instanceof String) {
            p.packString((String) v);
        } else if (v instanceof Boolean) {
            p.packBoolean((Boolean) v);
        } else if (v instanceof Double || v instanceof Float) {
            p.packDouble(((Number) v).doubleValue());
        } else if (v instanceof Number) {
            p.packLong(((Number) v).longValue());
        } else if (v instanceof byte[]) {
            byte[] b = (byte[]) v;
            p.packBinaryHeader(b.length);
            p.writePayload(b);
        } else if (v instanceof Object[]) {
            Object[] a = (Object[]) v;
            p.packArrayHeader(a.length);
            for (Object x : a) {
                value(p, x);
            }
        } else if (v instanceof List) {
            List<?> a = (List<?>) v;
            p.packArrayHeader(a.size());
            for (Object x : a) {
                value(p, x);
            }
        } else if (v instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) v;
            p.packMapHeader(m.size());
            for (Map.Entry<?, ?> e : m.entrySet()) {
                value(p, e.getKey());
                value(p, e.getValue());
            }
        } else {
            throw new IllegalArgumentException("expected a value a trace record holds (null, text, a number, a "
                + "boolean, bytes, a list or a map), received a " + v.getClass().getName());
        }
    }
}
