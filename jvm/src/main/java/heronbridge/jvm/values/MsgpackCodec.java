package heronbridge.jvm.values;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.core.ExtensionTypeHeader;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/** msgpack records, the runtime's default serializer (msgspec on the Python side). */
public final class MsgpackCodec implements Codec {
    private static final BigInteger INT_MIN = BigInteger.valueOf(Integer.MIN_VALUE);
    /** msgpack's int64 format byte. */
    private static final byte INT64 = (byte) 0xd3;
    private static final BigInteger UINT64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    private StormKryo kryo;

    @Override
    public void readKryoWith(StormKryo k) {
        kryo = k;
    }

    @Override
    public Object kryoValue(Object value, byte[] bytes) {
        return new KryoBytes(bytes);
    }

    /**
     * What {@link #pack} writes as itself: JSON's data model, as Storm's multilang JSON
     * gives it. Not a byte[] (json-smart cannot write one), a Character or a float that is
     * not finite (json-smart writes {}, null): a Java task gets them from Storm's Kryo.
     */
    @Override
    public boolean carries(Object v) {
        if (v == null || v instanceof String || v instanceof Integer || v instanceof Long || v instanceof Boolean
                || v instanceof Short || v instanceof Byte) {
            return true;
        }
        if (v instanceof Double || v instanceof Float) {
            return Codec.finite((Number) v);
        }
        if (v instanceof BigInteger) {
            return inRange((BigInteger) v);
        }
        return Codec.carriesContainer(this, v);
    }

    /**
     * What a Java task reads back as itself: a Long too (one that fits 32 bits is written
     * in msgpack's int64 format, used for nothing else there, so it is not read back as an
     * Integer). Not a Float, Short, Byte, BigInteger or BigDecimal: they would arrive as
     * Double, Integer or Long, so they go in Storm's Kryo bytes, which keep their class.
     */
    @Override
    public boolean keeps(Object v) {
        if (v == null || v instanceof String || v instanceof Integer || v instanceof Long || v instanceof Boolean) {
            return true;
        }
        if (v instanceof Double) {
            return Codec.finite((Double) v);
        }
        return Codec.keepsContainer(this, v);
    }

    private static boolean inRange(BigInteger b) {
        return b.signum() >= 0 ? b.compareTo(UINT64_MAX) <= 0 : b.bitLength() <= 63;
    }

    @Override
    public Codec.Batch batch() {
        return new Batch();
    }

    private static final class Batch implements Codec.Batch {
        private final MessageBufferPacker body = MessagePack.newDefaultBufferPacker();
        private final MessageBufferPacker one = MessagePack.newDefaultBufferPacker();
        private int count;

        @Override
        public void add(List<Object> values, long root, long edge, long[] pairs) {
            // One record at a time, so a bad value loses only its own tuple.
            one.clear();
            try {
                int n = pairs != null || root != 0 ? 3 : 1;
                one.packArrayHeader(n);
                packList(one, values);
                if (pairs != null) {
                    one.packLong(Record.MULTI);
                    one.packArrayHeader(pairs.length);
                    for (long p : pairs) {
                        one.packLong(p);
                    }
                } else if (root != 0) {
                    one.packLong(root);
                    one.packLong(edge);
                }
                body.addPayload(one.toByteArray());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            count++;
        }

        @Override
        public int count() {
            return count;
        }

        @Override
        public int size() {
            return (int) body.getTotalWrittenBytes();
        }

        @Override
        public byte[] take() {
            try {
                MessageBufferPacker out = MessagePack.newDefaultBufferPacker();
                out.packArrayHeader(count);
                out.flush();
                byte[] head = out.toByteArray();
                byte[] rest = body.toByteArray();
                byte[] all = new byte[head.length + rest.length];
                System.arraycopy(head, 0, all, 0, head.length);
                System.arraycopy(rest, 0, all, head.length, rest.length);
                body.clear();
                count = 0;
                return all;
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static void packList(MessageBufferPacker p, List<?> values) throws IOException {
        p.packArrayHeader(values.size());
        for (Object v : values) {
            pack(p, v);
        }
    }

    @SuppressWarnings("unchecked")
    static void pack(MessageBufferPacker p, Object v) throws IOException {
        if (v == null) {
            p.packNil();
        } else if (v instanceof String) {
            p.packString((String) v);
        } else if (v instanceof Long) {
            packLong(p, (Long) v);
        } else if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            p.packLong(((Number) v).longValue());
        } else if (v instanceof Double) {
            p.packDouble((Double) v);
        } else if (v instanceof Float) {
            // The double of its decimal text, as json-smart writes a Float (1.1f: 1.1, not
            // 1.100000023841858): what a ShellBolt's subprocess reads on Storm.
            p.packDouble(Double.parseDouble(v.toString()));
        } else if (v instanceof Boolean) {
            p.packBoolean((Boolean) v);
        } else if (v instanceof List) {
            packList(p, (List<Object>) v);
        } else if (v instanceof Map) {
            Map<Object, Object> m = (Map<Object, Object>) v;
            p.packMapHeader(m.size());
            for (Map.Entry<Object, Object> e : m.entrySet()) {
                p.packString(JsonCodec.key(e.getKey()));
                pack(p, e.getValue());
            }
        } else if (v instanceof Object[]) {
            Object[] a = (Object[]) v;
            p.packArrayHeader(a.length);
            for (Object x : a) {
                pack(p, x);
            }
        } else if (v instanceof Collection) {
            Collection<Object> c = (Collection<Object>) v;
            p.packArrayHeader(c.size());
            for (Object x : c) {
                pack(p, x);
            }
        } else if (v instanceof KryoBytes) {
            byte[] b = ((KryoBytes) v).bytes;
            p.packExtensionTypeHeader(StormKryo.EXT, b.length);
            p.writePayload(b);
        } else if (v instanceof BigInteger) {
            BigInteger b = (BigInteger) v;
            if (!inRange(b)) {
                throw new BadValue(v, "an integer beyond 64 bits");
            }
            p.packBigInteger(b);
        } else {
            throw new BadValue(v, "a " + v.getClass().getName());
        }
    }

    /**
     * A Long as msgpack's int64 when it fits 32 bits (the decoder reads only that format as
     * a Long there; Python's msgpack writes such numbers in fewer bytes); else in the fewest
     * bytes, as Python writes it.
     */
    private static void packLong(MessageBufferPacker p, long l) throws IOException {
        if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
            p.packLong(l);
            return;
        }
        byte[] b = new byte[9];
        b[0] = INT64;
        for (int i = 8; i > 0; i--) {
            b[i] = (byte) l;
            l >>= 8;
        }
        p.writePayload(b);
    }

    @Override
    public List<Record> decode(byte[] buf, int off, int len) {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(buf, off, len)) {
            int n = u.unpackArrayHeader();
            List<Record> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int size = u.unpackArrayHeader();
                int fields = u.unpackArrayHeader();
                List<Object> values = new ArrayList<>(fields);
                String unreadable = null;
                for (int j = 0; j < fields; j++) {
                    try {
                        values.add(value(u));
                    } catch (Unreadable e) {  // its bytes are consumed: the record's roots are still read
                        values.add(null);
                        unreadable = unreadable != null ? unreadable : "value " + j + ": " + e.getMessage();
                    }
                }
                if (size == 1) {
                    out.add(new Record(values, 0, 0, null, unreadable));
                    continue;
                }
                long root = u.unpackLong();
                if (root == Record.MULTI) {
                    int m = u.unpackArrayHeader();
                    long[] pairs = new long[m];
                    for (int j = 0; j < m; j++) {
                        pairs[j] = u.unpackLong();
                    }
                    out.add(new Record(values, root, 0, pairs, unreadable));
                } else {
                    out.add(new Record(values, root, u.unpackLong(), null, unreadable));
                }
            }
            return out;
        } catch (IOException e) {
            throw new IllegalArgumentException("records that are not msgpack: " + e.getMessage(), e);
        }
    }

    Object value(MessageUnpacker u) throws IOException {
        MessageFormat f = u.getNextFormat();
        ValueType t = f.getValueType();
        switch (t) {
            case NIL:
                u.unpackNil();
                return null;
            case BOOLEAN:
                return u.unpackBoolean();
            case INTEGER:
                if (f == MessageFormat.UINT64) {
                    BigInteger b = u.unpackBigInteger();
                    return b.bitLength() < 64 ? (Object) b.longValue() : b;
                }
                long l = u.unpackLong();
                if (f == MessageFormat.INT64) {  // a Long, whatever its value (see packLong)
                    return l;
                }
                return l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE ? (Object) (int) l : (Object) l;
            case FLOAT:
                return u.unpackDouble();
            case STRING:
                return u.unpackString();
            case BINARY:
                return u.readPayload(u.unpackBinaryHeader());
            case ARRAY: {
                int n = u.unpackArrayHeader();
                List<Object> list = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    list.add(value(u));
                }
                return list;
            }
            case MAP: {
                int n = u.unpackMapHeader();
                Map<String, Object> map = new HashMap<>(n * 2);
                for (int i = 0; i < n; i++) {
                    Object key = value(u);
                    map.put(JsonCodec.key(key), value(u));
                }
                return map;
            }
            case EXTENSION: {
                ExtensionTypeHeader h = u.unpackExtensionTypeHeader();
                byte[] payload = u.readPayload(h.getLength());
                if (h.getType() != StormKryo.EXT) {
                    throw new IOException("a msgpack extension value of type " + h.getType()
                        + ", which no runtime serializer writes");
                }
                return Codec.readKryo(kryo, payload);
            }
            default:
                throw new IOException("a msgpack " + t + " value, which no runtime serializer writes");
        }
    }

    static boolean fitsInt(BigInteger b) {
        return b.compareTo(INT_MIN) >= 0 && b.bitLength() < 32;
    }
}
