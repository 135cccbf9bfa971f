package heronbridge.jvm.values;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.net.minidev.json.JSONArray;
import org.apache.storm.shade.net.minidev.json.JSONObject;

/**
 * A topology's value serializer (runtime/wire/serde.py), seen from Java: what a batch of
 * records becomes on the wire and back. Values keep Storm's multilang meaning: JSON's data
 * model, integers as Integer when they fit in 32 bits and Long otherwise, floats as
 * Double, lists as ArrayList, maps as HashMap with string keys.
 */
public interface Codec {
    /** Start a batch for one destination. */
    Batch batch();

    List<Record> decode(byte[] buf, int off, int len);

    /** Whether a value crosses as itself (JSON-like in this format); anything else crosses as Storm would carry it. */
    boolean carries(Object value);

    /**
     * Whether a Java task reads a value back from this format as the same classes and
     * values, as Storm's Kryo gives them between workers (implies {@link #carries}); any
     * other value goes to a Java task in Storm's Kryo bytes.
     */
    boolean keeps(Object value);

    /**
     * A map, collection or array whose every value {@code codec} carries (map keys: null,
     * strings, numbers or booleans, which JSON's and msgpack's maps hold); false for
     * anything else.
     */
    static boolean carriesContainer(Codec codec, Object v) {
        if (v instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                Object k = e.getKey();
                if (!(k == null || k instanceof String || k instanceof Number || k instanceof Boolean)
                        || !codec.carries(e.getValue())) {
                    return false;
                }
            }
            return true;
        }
        if (v instanceof Collection) {
            for (Object x : (Collection<?>) v) {
                if (!codec.carries(x)) {
                    return false;
                }
            }
            return true;
        }
        if (v instanceof Object[]) {
            for (Object x : (Object[]) v) {
                if (!codec.carries(x)) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * A list or map that decoders read back as itself: an ArrayList, or a HashMap with
     * String keys, holding values {@code codec} keeps. Any other class of them (a
     * LinkedList, a TreeMap, List.of's) would arrive as another class. json-smart's
     * JSONArray and JSONObject (what a ShellBolt's subprocess emits) cross as ArrayList and
     * HashMap, as they always have here: Storm's Kryo does not register them, and a
     * multilang bolt in a JVM could otherwise send no list or object to a Java task.
     */
    static boolean keepsContainer(Codec codec, Object v) {
        Class<?> c = v.getClass();
        if (c == ArrayList.class || c == JSONArray.class) {
            ArrayList<?> list = (ArrayList<?>) v;
            for (int i = 0, n = list.size(); i < n; i++) {
                if (!codec.keeps(list.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (c == HashMap.class || c == JSONObject.class) {
            for (Map.Entry<?, ?> e : ((HashMap<?, ?>) v).entrySet()) {
                if (!(e.getKey() instanceof String) || !codec.keeps(e.getValue())) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * What stands for a value in Storm's Kryo bytes in a record bound for a Java task; throws
     * BadValue when the format cannot carry them.
     */
    Object kryoValue(Object value, byte[] bytes);

    /** The Kryo that reads values in Storm's Kryo bytes (null: none arrive). */
    void readKryoWith(StormKryo kryo);

    /** A value in Storm's Kryo bytes, as a record bound for a Java task holds it. */
    final class KryoBytes {
        public final byte[] bytes;

        public KryoBytes(byte[] bytes) {
            this.bytes = bytes;
        }
    }

    /** A value from Storm's Kryo bytes in a record; Unreadable when this task's Kryo cannot read them. */
    static Object readKryo(StormKryo kryo, byte[] bytes) {
        if (kryo == null) {
            throw new Unreadable("expected a JSON-like value, received Storm's Kryo bytes (" + bytes.length
                + " bytes) and no Kryo to read them with", null);
        }
        try {
            return kryo.read(bytes);
        } catch (RuntimeException | LinkageError e) {
            throw new Unreadable("expected Storm's Kryo bytes of a class this task's Kryo reads (" + kryo.configured
                + "), received " + bytes.length + " bytes it refused: " + e, e);
        }
    }

    /** Storm's Kryo bytes this task could not read back: the record's tuple is failed, not executed. */
    final class Unreadable extends RuntimeException {
        public Unreadable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A batch being encoded: records appended one by one, then its bytes. */
    interface Batch {
        /** Append a record; throws BadValue (nothing appended) for a value the format cannot carry. */
        void add(List<Object> values, long root, long edge, long[] pairs);

        int count();

        /** The bytes so far; the batch is empty again after it. */
        byte[] take();

        int size();
    }

    /** A value that cannot cross to the other languages. */
    final class BadValue extends RuntimeException {
        public final transient Object value;

        public BadValue(Object value, String message) {
            super(message);
            this.value = value;
        }
    }

    static Codec named(String name) {
        switch (name) {
            case "msgpack":
                return new MsgpackCodec();
            case "json":
                return new JsonCodec();
            default:
                throw new IllegalArgumentException("expected a serializer a Java task can read ('msgpack' or 'json'),"
                    + " received '" + name + "' (pickle carries Python objects, which Java cannot read)");
        }
    }

    /** A Double or Float that is neither infinite nor NaN. */
    static boolean finite(Number v) {
        double d = v.doubleValue();
        return !Double.isNaN(d) && !Double.isInfinite(d);
    }

    static String describe(Object value) {
        String text = String.valueOf(value);
        if (text.length() > 200) {
            text = text.substring(0, 200) + "...";
        }
        return (value == null ? "null" : value.getClass().getName()) + " " + text;
    }

    String EXPECTED = "JSON-like values (null, Boolean, Integer/Long/Short/Byte/BigInteger, finite Float/Double,"
        + " String, List or array, Map)";
}
