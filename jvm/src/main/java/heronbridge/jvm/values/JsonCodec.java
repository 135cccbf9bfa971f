package heronbridge.jvm.values;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.shade.net.minidev.json.parser.JSONParser;
import org.apache.storm.shade.net.minidev.json.parser.ParseException;
import org.apache.storm.shade.net.minidev.json.writer.JsonReaderI;

/**
 * JSON records (the "json" serializer): parsed with the JSON library Storm's multilang
 * serializer parses with (json-smart, as storm-client shades it), so a Java component sees
 * exactly the types a ShellBolt's Java side would: Integer or Long or BigInteger, Double,
 * String, Boolean, null, lists (ArrayList) and maps (HashMap).
 */
public final class JsonCodec implements Codec {
    @Override
    public Codec.Batch batch() {
        return new Batch();
    }

    /**
     * What {@link #write} writes as itself and every task reads back as Storm gives it. Not
     * a Character or a float that is not finite: json-smart writes them otherwise ({}, null),
     * and a Java task gets them from Storm's Kryo as they were.
     */
    @Override
    public boolean carries(Object v) {
        if (v == null || v instanceof String || v instanceof Integer || v instanceof Long || v instanceof Boolean
                || v instanceof Short || v instanceof Byte || v instanceof BigInteger || v instanceof BigDecimal) {
            return true;
        }
        if (v instanceof Double || v instanceof Float) {
            return Codec.finite((Number) v);
        }
        return Codec.carriesContainer(this, v);
    }

    /**
     * What a Java task reads back as itself. json-smart reads a number that fits 32 bits as
     * an Integer and a decimal longer than 18 characters as a BigDecimal, so a Long that
     * fits 32 bits and such a Double are not (nor a Float, Short, Byte, BigInteger or
     * BigDecimal): they go in Storm's Kryo bytes, which keep their class.
     */
    @Override
    public boolean keeps(Object v) {
        if (v == null || v instanceof String || v instanceof Integer || v instanceof Boolean) {
            return true;
        }
        if (v instanceof Long) {
            long l = (Long) v;
            return l < Integer.MIN_VALUE || l > Integer.MAX_VALUE;
        }
        if (v instanceof Double) {
            double d = (Double) v;
            return Codec.finite(d) && Double.toString(d).length() <= 18;
        }
        return Codec.keepsContainer(this, v);
    }

    private StormKryo kryo;

    /**
     * JSON has no type to spare for Storm's Kryo bytes: a record bound for a Java task
     * holding some carries them as base64 strings and names their positions in a fourth
     * element ({@code [values, root, edge, [positions]]}, root and edge 0 when untracked).
     * Only Java tasks receive such records.
     */
    @Override
    public Object kryoValue(Object value, byte[] bytes) {
        return new KryoBytes(bytes);
    }

    @Override
    public void readKryoWith(StormKryo k) {
        kryo = k;
    }

    /**
     * The trace's text of a tuple's values: a value that is not JSON-like as a multilang
     * subprocess would see it (Multilang), so that a Java component's traces read alike on
     * Storm and on the runtime.
     */
    public static byte[] canonicalValues(List<Object> values) {
        JsonCodec json = new JsonCodec();
        List<Object> shown = new ArrayList<>(values.size());
        for (Object v : values) {
            if (json.carries(v)) {
                shown.add(v);
            } else if (v instanceof byte[]) {  // reaches Java tasks only; json-smart cannot write it
                shown.add(Base64.getEncoder().encodeToString((byte[]) v));
            } else {
                shown.add(Multilang.shown(v));
            }
        }
        return canonical(shown);
    }

    private static final class Batch implements Codec.Batch {
        private final StringBuilder body = new StringBuilder(4096);
        private final StringBuilder one = new StringBuilder(256);
        private int count;

        @Override
        public void add(List<Object> values, long root, long edge, long[] pairs) {
            one.setLength(0);
            one.append('[');
            StringBuilder kryoAt = null;
            one.append('[');
            for (int i = 0; i < values.size(); i++) {
                one.append(i == 0 ? "" : ",");
                Object v = values.get(i);
                if (v instanceof KryoBytes) {
                    kryoAt = kryoAt == null ? new StringBuilder() : kryoAt.append(',');
                    kryoAt.append(i);
                    one.append('"').append(Base64.getEncoder().encodeToString(((KryoBytes) v).bytes)).append('"');
                } else {
                    write(one, v);
                }
            }
            one.append(']');
            if (pairs != null) {
                one.append(",-1,[");
                for (int i = 0; i < pairs.length; i++) {
                    one.append(i == 0 ? "" : ",").append(pairs[i]);
                }
                one.append(']');
            } else if (root != 0 || kryoAt != null) {
                one.append(',').append(root).append(',').append(edge);
            }
            if (kryoAt != null) {
                one.append(",[").append(kryoAt).append(']');
            }
            one.append(']');
            body.append(count == 0 ? "[" : ",").append(one);
            count++;
        }

        @Override
        public int count() {
            return count;
        }

        @Override
        public int size() {
            return body.length();
        }

        @Override
        public byte[] take() {
            body.append(count == 0 ? "[]" : "]");
            byte[] out = body.toString().getBytes(StandardCharsets.UTF_8);
            body.setLength(0);
            count = 0;
            return out;
        }
    }

    /**
     * The conformance traces' text of a value: compact JSON with map keys sorted, as the
     * Python tracing hook writes it (schema.canonical_bytes). Floats are Java's text of them.
     */
    public static byte[] canonical(Object v) {
        StringBuilder out = new StringBuilder();
        write(out, sorted(v));
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static Object sorted(Object v) {
        if (v instanceof Map) {
            java.util.TreeMap<String, Object> m = new java.util.TreeMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                m.put(key(e.getKey()), sorted(e.getValue()));
            }
            return m;
        }
        if (v instanceof Collection) {
            List<Object> l = new java.util.ArrayList<>();
            for (Object x : (Collection<?>) v) {
                l.add(sorted(x));
            }
            return l;
        }
        return v;
    }

    /** A map key as JSON writes it: a string (Python's json turns 1, True, None into "1", "true", "null"). */
    static String key(Object k) {
        if (k instanceof String) {
            return (String) k;
        }
        if (k instanceof Boolean || k == null || k instanceof Number) {
            return String.valueOf(k);
        }
        throw new BadValue(k, "a map key of " + k.getClass().getName());
    }

    @SuppressWarnings("unchecked")
    static void write(StringBuilder out, Object v) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof String) {
            string(out, (String) v);
        } else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
                || v instanceof BigInteger) {
            out.append(v);
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d)) {
                out.append("NaN");
            } else if (Double.isInfinite(d)) {
                out.append(d > 0 ? "Infinity" : "-Infinity");
            } else {
                out.append(v);
            }
        } else if (v instanceof BigDecimal) {
            out.append(((BigDecimal) v).toString());
        } else if (v instanceof Boolean) {
            out.append(((Boolean) v) ? "true" : "false");
        } else if (v instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<Object, Object> e : ((Map<Object, Object>) v).entrySet()) {
                out.append(first ? "" : ",");
                first = false;
                string(out, key(e.getKey()));
                out.append(':');
                write(out, e.getValue());
            }
            out.append('}');
        } else if (v instanceof Collection) {
            out.append('[');
            boolean first = true;
            for (Object x : (Collection<Object>) v) {
                out.append(first ? "" : ",");
                first = false;
                write(out, x);
            }
            out.append(']');
        } else if (v instanceof Object[]) {
            out.append('[');
            Object[] a = (Object[]) v;
            for (int i = 0; i < a.length; i++) {
                out.append(i == 0 ? "" : ",");
                write(out, a[i]);
            }
            out.append(']');
        } else if (v instanceof Character) {
            string(out, v.toString());
        } else {
            throw new BadValue(v, "a " + v.getClass().getName());
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20 || Character.isSurrogate(c) && !validSurrogate(s, i)) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    private static boolean validSurrogate(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }

    /** The values at {@code positions} read from Storm's Kryo bytes in place; why one could not be, else null. */
    private String readKryo(List<Object> values, List<Object> positions) {
        String unreadable = null;
        for (Object p : positions) {
            int i = ((Number) p).intValue();
            byte[] bytes = Base64.getDecoder().decode((String) values.get(i));
            try {
                values.set(i, Codec.readKryo(kryo, bytes));
            } catch (Unreadable e) {
                values.set(i, null);
                unreadable = unreadable != null ? unreadable : "value " + i + ": " + e.getMessage();
            }
        }
        return unreadable;
    }

    /**
     * json-smart's reader of JSON arrays and objects as ArrayList and HashMap, the classes
     * Storm's Kryo gives a Java task (its own JSONArray and JSONObject are neither, and
     * Storm's Kryo does not register them). Numbers are read as JSONValue.parse reads them.
     */
    private static final JsonReaderI<Object> PLAIN = new JsonReaderI<Object>(JSONValue.defaultReader) {
        @Override
        public JsonReaderI<?> startObject(String key) {
            return this;
        }

        @Override
        public JsonReaderI<?> startArray(String key) {
            return this;
        }

        @Override
        public Object createObject() {
            return new HashMap<String, Object>();
        }

        @Override
        public Object createArray() {
            return new ArrayList<Object>();
        }

        @Override
        @SuppressWarnings("unchecked")
        public void setValue(Object current, String key, Object value) {
            ((Map<String, Object>) current).put(key, value);
        }

        @Override
        @SuppressWarnings("unchecked")
        public void addValue(Object current, Object value) {
            ((List<Object>) current).add(value);
        }

        @Override
        public Object convert(Object current) {
            return current;
        }
    };

    /** JSON text as JSONValue.parse reads it (its permissive mode), into ArrayList and HashMap. */
    static Object parse(String text) {
        try {
            return new JSONParser(JSONParser.DEFAULT_PERMISSIVE_MODE).parse(text, PLAIN);
        } catch (ParseException e) {
            throw new IllegalArgumentException("records that are not JSON: " + e.getMessage(), e);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public List<Record> decode(byte[] buf, int off, int len) {
        Object parsed = parse(new String(buf, off, len, StandardCharsets.UTF_8));
        if (!(parsed instanceof List)) {
            throw new IllegalArgumentException("records that are not a JSON list");
        }
        List<Object> batch = (List<Object>) parsed;
        List<Record> out = new ArrayList<>(batch.size());
        for (Object item : batch) {
            List<Object> rec = (List<Object>) item;
            List<Object> values = (List<Object>) rec.get(0);
            if (rec.size() == 1) {
                out.add(new Record(values, 0, 0, null));
                continue;
            }
            String unreadable = rec.size() > 3 ? readKryo(values, (List<Object>) rec.get(3)) : null;
            long root = ((Number) rec.get(1)).longValue();
            if (root == Record.MULTI) {
                List<Object> raw = (List<Object>) rec.get(2);
                long[] pairs = new long[raw.size()];
                for (int i = 0; i < pairs.length; i++) {
                    pairs[i] = ((Number) raw.get(i)).longValue();
                }
                out.add(new Record(values, root, 0, pairs, unreadable));
            } else {
                out.add(new Record(values, root, ((Number) rec.get(2)).longValue(), null, unreadable));
            }
        }
        return out;
    }
}
