package heronbridge.jvm.values;

import java.util.List;

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

    static String describe(Object value) {
        String text = String.valueOf(value);
        if (text.length() > 200) {
            text = text.substring(0, 200) + "...";
        }
        return (value == null ? "null" : value.getClass().getName()) + " " + text;
    }

    String EXPECTED = "JSON-like values (null, Boolean, Integer/Long/Short/Byte/BigInteger, Float/Double, String,"
        + " List or array, Map)";
}
