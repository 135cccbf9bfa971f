package heronbridge.jvm.values;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.serialization.SerializationFactory;

/**
 * Storm's own Kryo, built as a Storm worker builds it (SerializationFactory.getKryo) from
 * the topology's config: how a value that is not JSON-like crosses from one Java task to
 * another, as Storm carries every tuple between workers. On the msgpack wire its bytes are
 * an extension value of type {@link #EXT}.
 *
 * <p>Storm 2.8.3's defaults.yaml sets {@code topology.fall.back.on.java.serialization:
 * false}, so with Storm's defaults a class must be registered ({@code topology.kryo.register})
 * or Kryo refuses it, as Storm refuses it between two workers. Only a topology whose config
 * turns the fallback on gets Java serialization, from Storm's own serializer, as on Storm.
 * Storm passes tuples within one worker by reference, unserialized; here every task is its
 * own process, so every Java-to-Java edge is an edge between workers.
 */
public final class StormKryo {
    /** The msgpack extension type of a value in Storm's Kryo bytes (also in runtime/wire/serde.py). */
    public static final byte EXT = 75;

    private final Kryo kryo;
    private final Output out = new Output(256, -1);
    /** What the error of a refused value says about the config that refused it. */
    public final String configured;

    private StormKryo(Kryo kryo, String configured) {
        this.kryo = kryo;
        this.configured = configured;
    }

    /**
     * The Kryo of a topology: {@code conf} is Storm's defaults under the topology's config;
     * registrations and decorators are those of the topology and of every component, merged
     * as Nimbus merges them before workers start, so that every task of the topology numbers
     * registered classes alike.
     */
    public static StormKryo of(Map<String, Object> conf, List<Map<String, Object>> componentConfs) {
        Map<String, Object> merged = new HashMap<>(conf);
        Map<String, String> register = new TreeMap<>();
        LinkedHashSet<String> decorators = new LinkedHashSet<>();
        for (Map<String, Object> c : componentConfs) {
            addRegistrations(register, c.get(Config.TOPOLOGY_KRYO_REGISTER));
            addDecorators(decorators, c.get(Config.TOPOLOGY_KRYO_DECORATORS));
        }
        addRegistrations(register, conf.get(Config.TOPOLOGY_KRYO_REGISTER));
        addDecorators(decorators, conf.get(Config.TOPOLOGY_KRYO_DECORATORS));
        merged.put(Config.TOPOLOGY_KRYO_REGISTER, register);
        merged.put(Config.TOPOLOGY_KRYO_DECORATORS, new ArrayList<>(decorators));
        String configured = "topology.kryo.register " + register.keySet() + ", "
            + Config.TOPOLOGY_FALL_BACK_ON_JAVA_SERIALIZATION + " "
            + merged.get(Config.TOPOLOGY_FALL_BACK_ON_JAVA_SERIALIZATION) + ", "
            + Config.TOPOLOGY_SKIP_MISSING_KRYO_REGISTRATIONS + " "
            + merged.get(Config.TOPOLOGY_SKIP_MISSING_KRYO_REGISTRATIONS);
        return new StormKryo(SerializationFactory.getKryo(merged), configured);
    }

    @SuppressWarnings("unchecked")
    private static void addRegistrations(Map<String, String> into, Object raw) {
        if (raw instanceof Map) {
            for (Map.Entry<Object, Object> e : ((Map<Object, Object>) raw).entrySet()) {
                into.put(String.valueOf(e.getKey()), e.getValue() == null ? null : String.valueOf(e.getValue()));
            }
        } else if (raw instanceof List) {
            for (Object o : (List<Object>) raw) {
                if (o instanceof Map) {
                    addRegistrations(into, o);
                } else {
                    into.put(String.valueOf(o), null);
                }
            }
        }
    }

    private static void addDecorators(LinkedHashSet<String> into, Object raw) {
        if (raw instanceof List) {
            for (Object o : (List<?>) raw) {
                into.add(String.valueOf(o));
            }
        }
    }

    /** A value's bytes: its class and itself, as Kryo writes an object of a tuple. */
    public synchronized byte[] write(Object value) {
        out.reset();
        try {
            kryo.writeClassAndObject(out, value);
        } catch (RuntimeException | StackOverflowError e) {
            // Kryo's message names the class and the registration it lacks (a cycle, with
            // Storm's references off, overflows the stack).
            throw new Codec.BadValue(value, "Storm's Kryo refused it: " + e);
        }
        return out.toBytes();
    }

    /** A value from bytes {@link #write} made (in this task or another of the topology). */
    public synchronized Object read(byte[] bytes) {
        return kryo.readClassAndObject(new Input(bytes));
    }
}
