package heronbridge.jvm.values;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/**
 * A Java value that is not JSON-like, as a task in another language receives it: what
 * Storm 2.8.3's ShellBolt sends its subprocess. Storm's multilang JsonSerializer writes a
 * tuple's values with json-smart's JSONValue (2.6.0, shaded in storm-client), and the
 * subprocess parses that JSON. So the value is written by that same JSONValue and read
 * back: a bean becomes an object of its properties (fields with a getter, and public
 * fields), a Date its toString(), an enum its name, a primitive array a list, an object
 * with no properties {} (a Character too), an infinite float null. What json-smart cannot
 * write (a byte[], a char[]: its array writer casts them to Object[]) kills the
 * ShellBolt's writer thread, and the bolt with it; NaN, which it writes as NaN, kills the
 * pystorm subprocess that reads it. Here such an emit is refused.
 */
public final class Multilang {
    private Multilang() {
    }

    /**
     * The JSON-like value a multilang subprocess parses from Storm's JSON of {@code value};
     * BadValue for what json-smart cannot write, or writes as NaN, which pystorm's JSON
     * reader refuses (simplejson, whose loads rejects NaN since 3.19): on Storm the Python
     * task's process dies of it.
     */
    public static Object value(Object value) {
        return normal(parsed(value), value, true);
    }

    /** The same for a trace, which shows what was emitted whoever can read it: NaN kept. */
    public static Object shown(Object value) {
        return normal(parsed(value), value, false);
    }

    private static Object parsed(Object value) {
        String text;
        try {
            text = JSONValue.toJSONString(value);
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            throw new Codec.BadValue(value, "json-smart (Storm's multilang JSON) cannot write it: " + e);
        }
        return JSONValue.parse(text);
    }

    /** json-smart's parse, in the types the codecs carry: its Float (NaN) and BigDecimal as Double, as Python's json reads them. */
    @SuppressWarnings("unchecked")
    private static Object normal(Object v, Object value, boolean strict) {
        if (v instanceof Map) {
            Map<String, Object> out = new HashMap<>();
            for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                out.put(e.getKey(), normal(e.getValue(), value, strict));
            }
            return out;
        }
        if (v instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object x : (List<Object>) v) {
                out.add(normal(x, value, strict));
            }
            return out;
        }
        if (v instanceof Number && !(v instanceof Integer || v instanceof Long || v instanceof BigInteger)) {
            double d = ((Number) v).doubleValue();
            if (strict && Double.isNaN(d)) {
                throw new Codec.BadValue(value, "json-smart (Storm's multilang JSON) writes NaN, which pystorm's "
                    + "JSON reader refuses (simplejson rejects NaN since 3.19): on Storm the Python task's process "
                    + "dies of it");
            }
            return d;
        }
        return v;
    }
}
