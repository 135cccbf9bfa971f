package heronbridge.jvm.plan;

import heronbridge.jvm.HostError;
import heronbridge.runtime.TopologyOuterClass.ComponentDecl;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectStreamClass;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/**
 * How a Java object of the topology is made: Storm's JavaObject (a class name and typed
 * constructor arguments, the way streamparse's JavaSpout/JavaBolt and Flux name one), or
 * the object Storm's TopologyBuilder serialized, in a file of the topology's own package.
 *
 * <p>In a component's config (key {@value StormView#COMPONENT_KEY}) or a custom grouping's
 * {@code custom} text, as JSON: {@code {"class": "a.B", "args": [{"long": 1}, {"string": "x"}]}}
 * (arg kinds as JavaObjectArg's: int, long, string, bool, binary (base64), double) or
 * {@code {"serialized": "/path/of/file"}}.
 */
public final class ComponentSpec {
    public final String className;
    public final List<Object> args;
    public final List<Class<?>> argTypes;
    public final String serialized;

    private ComponentSpec(String className, List<Object> args, List<Class<?>> argTypes, String serialized) {
        this.className = className;
        this.args = args;
        this.argTypes = argTypes;
        this.serialized = serialized;
    }

    /** A component's spec, or null when it is not a Java component. */
    public static ComponentSpec of(ComponentDecl c) {
        Object conf = JSONValue.parse(c.getConfigJson().isEmpty() ? "{}" : c.getConfigJson());
        if (!isJava(c, conf)) {
            return null;
        }
        return from(((Map<?, ?>) conf).get(StormView.COMPONENT_KEY), "component '" + c.getName() + "'");
    }

    /** Whether a component runs in the JVM task host (runtime/scheduler/jvm.py's is_java). */
    public static boolean isJava(ComponentDecl c) {
        return isJava(c, JSONValue.parse(c.getConfigJson().isEmpty() ? "{}" : c.getConfigJson()));
    }

    private static boolean isJava(ComponentDecl c, Object conf) {
        return conf instanceof Map && ((Map<?, ?>) conf).containsKey(StormView.COMPONENT_KEY);
    }

    public static ComponentSpec parse(String json, String what) {
        return from(JSONValue.parse(json), what);
    }

    private static ComponentSpec from(Object raw, String what) {
        if (!(raw instanceof Map)) {
            throw new HostError(what + ": expected a Java object spec {\"class\": ..., \"args\": [...]} or "
                + "{\"serialized\": ...}, received " + raw);
        }
        Map<?, ?> spec = (Map<?, ?>) raw;
        if (spec.get("serialized") instanceof String) {
            return new ComponentSpec(null, List.of(), List.of(), (String) spec.get("serialized"));
        }
        if (!(spec.get("class") instanceof String)) {
            throw new HostError(what + ": expected a Java object spec with a \"class\" name, received " + raw);
        }
        List<Object> args = new ArrayList<>();
        List<Class<?>> types = new ArrayList<>();
        Object rawArgs = spec.get("args");
        for (Object a : rawArgs instanceof List ? (List<?>) rawArgs : List.of()) {
            if (!(a instanceof Map) || ((Map<?, ?>) a).size() != 1) {
                throw new HostError(what + ": expected each constructor argument as {kind: value} with a kind among "
                    + "int, long, string, bool, binary, double (Storm's JavaObjectArg), received " + a);
            }
            Map.Entry<?, ?> e = ((Map<?, ?>) a).entrySet().iterator().next();
            Object v = e.getValue();
            switch (String.valueOf(e.getKey())) {
                case "int": args.add(((Number) v).intValue()); types.add(Integer.class); break;
                case "long": args.add(((Number) v).longValue()); types.add(Long.class); break;
                case "string": args.add((String) v); types.add(String.class); break;
                case "bool": args.add((Boolean) v); types.add(Boolean.class); break;
                case "double": args.add(((Number) v).doubleValue()); types.add(Double.class); break;
                case "binary":
                    args.add(ByteBuffer.wrap(Base64.getDecoder().decode((String) v)));
                    types.add(ByteBuffer.class);
                    break;
                default:
                    throw new HostError(what + ": expected an argument kind among int, long, string, bool, binary, "
                        + "double, received " + e.getKey());
            }
        }
        return new ComponentSpec((String) spec.get("class"), args, types, null);
    }

    /**
     * The object, made the way Storm makes it: the public constructor whose parameter types
     * are exactly the arguments' boxed types (Thrift.instantiateJavaObject), or the
     * serialized object read with this class loader. Errors name `where`.
     */
    public Object instantiate(ClassLoader loader, String where) {
        if (serialized != null) {
            return deserialize(loader, where);
        }
        Class<?> cls;
        try {
            cls = Class.forName(className, true, loader);
        } catch (ClassNotFoundException | NoClassDefFoundError e) {
            throw new HostError(where + ": expected a class on the task's classpath, received '" + className
                + "', which is not on it (" + e + "); " + WHERE_JARS_GO, e);
        }
        Constructor<?> cons;
        try {
            cons = cls.getConstructor(argTypes.toArray(new Class<?>[0]));
        } catch (NoSuchMethodException e) {
            StringJoiner have = new StringJoiner(", ");
            for (Constructor<?> c : cls.getConstructors()) {
                have.add(signature(List.of(c.getParameterTypes())));
            }
            throw new HostError(where + ": expected a public constructor of " + className + " taking "
                + signature(argTypes) + " for args_list " + describe(args) + ", received a class whose public "
                + "constructors take " + (have.length() == 0 ? "nothing (it has none)" : have), e);
        }
        try {
            return cons.newInstance(args.toArray());
        } catch (InvocationTargetException e) {
            throw new HostError(where + ": the constructor " + className + signature(argTypes) + " threw "
                + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new HostError(where + ": cannot construct " + className + ": " + e, e);
        }
    }

    private Object deserialize(ClassLoader loader, String where) {
        try (InputStream in = Files.newInputStream(Path.of(serialized));
             ObjectInputStream objects = new ObjectInputStream(in) {
                 @Override
                 protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
                     try {
                         return Class.forName(desc.getName(), false, loader);
                     } catch (ClassNotFoundException e) {
                         return super.resolveClass(desc);
                     }
                 }
             }) {
            return objects.readObject();
        } catch (ClassNotFoundException e) {
            throw new HostError(where + ": expected the classes of the serialized component " + serialized
                + " on the task's classpath, received one that is not (" + e.getMessage() + ")", e);
        } catch (IOException e) {
            throw new HostError(where + ": cannot read the serialized component " + serialized + ": " + e, e);
        }
    }

    /**
     * Where a project's Java classes come from: the classpath itself (the host's jar, Storm's
     * and the project's) is kilobytes of names no one reads in an error.
     */
    static final String WHERE_JARS_GO = "the project's Java classes come from its jar in lein's target folder "
        + "(`lein jar`) or from the jars of a folder given with `--java-jars DIR`, with the classes they need "
        + "(an uberjar, or each dependency's jar there too)";

    private static String signature(List<Class<?>> types) {
        StringJoiner out = new StringJoiner(", ", "(", ")");
        for (Class<?> t : types) {
            out.add(t.getSimpleName());
        }
        return out.toString();
    }

    private static String describe(List<Object> args) {
        StringJoiner out = new StringJoiner(", ", "[", "]");
        for (Object a : args) {
            out.add(a instanceof String ? "'" + a + "'" : String.valueOf(a));
        }
        return out.toString();
    }

    public String describe() {
        return serialized != null ? "the serialized object in " + serialized : className + describe(args);
    }
}
