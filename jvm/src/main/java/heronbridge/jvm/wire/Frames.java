package heronbridge.jvm.wire;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import heronbridge.runtime.Control;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Frames on the runtime's sockets (runtime/wire/frames.py): every frame starts with
 * {@code <u32 length><u8 kind><u32 dest>}, little-endian, where length counts the bytes
 * after itself. Data frames add {@code <u32 src><u16 stream>} and the serialized records;
 * ack, init, fail, acked, failed and expired frames carry int64s; control frames carry
 * {@code <u8 name_len><protobuf full name><protobuf bytes>}.
 */
public final class Frames {
    public static final int DATA = 1;
    public static final int ACK = 2;
    public static final int FAIL = 3;
    public static final int INIT = 4;
    public static final int ACKED = 5;
    public static final int FAILED = 6;
    public static final int EXPIRED = 7;
    public static final int CONTROL = 8;
    public static final int MARKER = 9;

    public static final int HEADER_SIZE = 9;
    public static final int DATA_HEADER_SIZE = 15;
    public static final int MAX_FRAME = 64 << 20;
    /** Roots carry their spout's task id in these high bits, so anyone can route an ack. */
    public static final int ROOT_TASK_SHIFT = 40;
    public static final long ROOT_SEQ_MASK = (1L << ROOT_TASK_SHIFT) - 1;

    private static final Map<String, Parser<? extends Message>> PARSERS = new HashMap<>();

    static {
        for (Message m : new Message[] {
            Control.RegisterInstanceResponse.getDefaultInstance(),
            Control.TopologyStateChange.getDefaultInstance(),
            Control.StartCheckpoint.getDefaultInstance(),
            Control.RestoreState.getDefaultInstance(),
            Control.StartProcessing.getDefaultInstance(),
            Control.RestartTask.getDefaultInstance(),
        }) {
            PARSERS.put(m.getDescriptorForType().getFullName(), m.getParserForType());
        }
    }

    private Frames() {
    }

    public static boolean knownKind(int kind) {
        return kind >= DATA && kind <= MARKER;
    }

    public static String kindName(int kind) {
        switch (kind) {
            case DATA: return "data";
            case ACK: return "ack";
            case FAIL: return "fail";
            case INIT: return "init";
            case ACKED: return "acked";
            case FAILED: return "failed";
            case EXPIRED: return "expired";
            case CONTROL: return "control";
            case MARKER: return "marker";
            default: return "kind " + kind;
        }
    }

    public static byte[] dataFrame(int dest, int src, int stream, byte[] records, int length) {
        ByteBuffer out = ByteBuffer.allocate(DATA_HEADER_SIZE + length).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(DATA_HEADER_SIZE - 4 + length).put((byte) DATA).putInt(dest).putInt(src).putShort((short) stream);
        out.put(records, 0, length);
        return out.array();
    }

    public static byte[] intFrame(int kind, int dest, long[] ints, int count) {
        ByteBuffer out = ByteBuffer.allocate(HEADER_SIZE + 8 * count).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(HEADER_SIZE - 4 + 8 * count).put((byte) kind).putInt(dest);
        for (int i = 0; i < count; i++) {
            out.putLong(ints[i]);
        }
        return out.array();
    }

    public static byte[] controlFrame(Message message, int dest) {
        byte[] name = message.getDescriptorForType().getFullName().getBytes(StandardCharsets.UTF_8);
        byte[] body = message.toByteArray();
        ByteBuffer out = ByteBuffer.allocate(HEADER_SIZE + 1 + name.length + body.length)
            .order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(HEADER_SIZE - 4 + 1 + name.length + body.length).put((byte) CONTROL).putInt(dest);
        out.put((byte) name.length).put(name).put(body);
        return out.array();
    }

    /** The message of a control frame spanning buf[start, end); null for a type a task does not take. */
    public static Message parseControl(byte[] buf, int start, int end) throws InvalidProtocolBufferException {
        int nameLen = buf[start + HEADER_SIZE] & 0xff;
        int from = start + HEADER_SIZE + 1;
        String name = new String(buf, from, nameLen, StandardCharsets.UTF_8);
        Parser<? extends Message> parser = PARSERS.get(name);
        if (parser == null) {
            return null;
        }
        return parser.parseFrom(buf, from + nameLen, end - from - nameLen);
    }

    public static int kind(byte[] buf, int start) {
        return buf[start + 4] & 0xff;
    }

    public static int u32(byte[] buf, int at) {
        return (buf[at] & 0xff) | (buf[at + 1] & 0xff) << 8 | (buf[at + 2] & 0xff) << 16 | (buf[at + 3] & 0xff) << 24;
    }

    public static int u16(byte[] buf, int at) {
        return (buf[at] & 0xff) | (buf[at + 1] & 0xff) << 8;
    }

    public static long i64(byte[] buf, int at) {
        return ByteBuffer.wrap(buf, at, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }
}
