package heronbridge.oracle;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.storm.Config;
import org.apache.storm.daemon.GrouperFactory;
import org.apache.storm.generated.Grouping;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.grouping.LoadAwareCustomStreamGrouping;
import org.apache.storm.grouping.PartialKeyGrouping;
import org.apache.storm.multilang.JsonSerializer;
import org.apache.storm.multilang.ShellMsg;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.topology.BasicOutputCollector;
import org.apache.storm.topology.BoltDeclarer;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.topology.base.BaseBasicBolt;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.utils.TupleUtils;
import org.apache.storm.utils.Utils;
import org.apache.storm.utils.VersionInfo;

/**
 * Computes routing test vectors with Storm's own classes.
 *
 * <p>Every tuple is parsed from a multilang "emit" message by {@link JsonSerializer} (as ShellBolt and
 * ShellSpout do), and routed by the grouper that {@link GrouperFactory#mkGrouper} builds from a real
 * topology made with {@link TopologyBuilder} (as Executor does), so the vectors reflect Storm's own
 * parsing, field selection, task sorting and hashing.
 *
 * <p>Usage: {@code JavaHashOracle <wire-cases.json> <vectors.json>}.
 */
public final class JavaHashOracle {
    private static final String SRC = "src";
    private static final String DST = "dst";
    private static final String STREAM = Utils.DEFAULT_STREAM_ID;
    private static final int SRC_TASK = 1;
    private static final int MAX_N = 13;

    private JavaHashOracle() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: JavaHashOracle <wire-cases.json> <vectors.json>");
            System.exit(2);
        }
        String text = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        Map<String, Object> cases = asMap(JSONValue.parseWithException(text));

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("meta", meta());
        out.put("values", valueVectors(asList(cases.get("values"))));
        out.put("fields", fieldsVectors(asList(cases.get("fields"))));
        out.put("pkg", pkgVectors(asList(cases.get("pkg"))));
        out.put("random", randomVectors(asList(cases.get("random"))));

        StringBuilder sb = new StringBuilder();
        Json.write(out, sb, 0);
        sb.append('\n');
        Files.write(Paths.get(args[1]), sb.toString().getBytes(StandardCharsets.US_ASCII));
    }

    private static Map<String, Object> meta() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("storm_version", VersionInfo.getVersion());
        m.put("storm_revision", VersionInfo.getRevision());
        m.put("json_smart_version", shadedJsonSmartVersion());
        m.put("json_smart_parser", "JSONValue.parseWithException (JSONParser.DEFAULT_PERMISSIVE_MODE = "
            + org.apache.storm.shade.net.minidev.json.parser.JSONParser.DEFAULT_PERMISSIVE_MODE + ")");
        m.put("java_version", System.getProperty("java.version"));
        m.put("java_vendor", System.getProperty("java.vendor"));
        m.put("default_charset", Charset.defaultCharset().name());
        m.put("max_n", MAX_N);
        return m;
    }

    private static String shadedJsonSmartVersion() {
        String res = "META-INF/maven/net.minidev/json-smart/pom.properties";
        try (InputStream in = JSONValue.class.getClassLoader().getResourceAsStream(res)) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    // ---------------------------------------------------------------- multilang parsing

    /** Parses the tuple of one multilang emit message exactly as ShellBolt/ShellSpout receive it. */
    static List<Object> parseEmit(String tupleWire) throws Exception {
        String msg = "{\"command\": \"emit\", \"tuple\": " + tupleWire + "}\nend\n";
        JsonSerializer ser = new JsonSerializer();
        ser.initialize(new ByteArrayOutputStream(),
            new ByteArrayInputStream(msg.getBytes(StandardCharsets.UTF_8)));
        ShellMsg shellMsg = ser.readShellMsg();
        return shellMsg.getTuple();
    }

    // ---------------------------------------------------------------- topology plumbing

    /** Spout declaring {@code f0..f(arity-1)} on the default stream. */
    public static final class FieldsSpout extends BaseRichSpout {
        private static final long serialVersionUID = 1L;
        private final int arity;

        FieldsSpout(int arity) {
            this.arity = arity;
        }

        @Override
        public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        }

        @Override
        public void nextTuple() {
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
            declarer.declare(fieldNames(arity));
        }
    }

    /** Bolt that only exists to subscribe with a grouping. */
    public static final class SinkBolt extends BaseBasicBolt {
        private static final long serialVersionUID = 1L;

        @Override
        public void execute(Tuple input, BasicOutputCollector collector) {
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
        }
    }

    static Fields fieldNames(int arity) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < arity; i++) {
            names.add("f" + i);
        }
        return new Fields(names);
    }

    static Fields selectNames(List<Object> indices) {
        List<String> names = new ArrayList<>();
        for (Object i : indices) {
            names.add("f" + ((Number) i).intValue());
        }
        return new Fields(names);
    }

    /** Distinct, non-contiguous task ids for the n target tasks, deliberately not sorted. */
    static List<Integer> targetTaskIds(int n) {
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(3 + 7 * i + i * i);
        }
        Collections.shuffle(ids, new java.util.Random(n));
        return ids;
    }

    /** A grouper for src->dst built the way Executor.outboundComponents builds it. */
    static final class Route {
        final LoadAwareCustomStreamGrouping grouper;
        final List<Integer> sortedTasks;
        final Fields outFields;

        Route(int arity, int n, Consumer<BoltDeclarer> subscribe) {
            TopologyBuilder builder = new TopologyBuilder();
            builder.setSpout(SRC, new FieldsSpout(arity));
            subscribe.accept(builder.setBolt(DST, new SinkBolt(), n));
            StormTopology topology = builder.createTopology();

            Map<String, Object> conf = new HashMap<>();
            conf.put(Config.STORM_CLUSTER_MODE, "distributed");
            List<Integer> dstTasks = targetTaskIds(n);
            Map<Integer, String> taskToComponent = new HashMap<>();
            taskToComponent.put(SRC_TASK, SRC);
            for (Integer t : dstTasks) {
                taskToComponent.put(t, DST);
            }
            Map<String, List<Integer>> componentTasks = new HashMap<>();
            componentTasks.put(SRC, Collections.singletonList(SRC_TASK));
            componentTasks.put(DST, dstTasks);
            Map<String, Map<String, Fields>> streamFields = new HashMap<>();
            streamFields.put(SRC, Collections.singletonMap(STREAM, fieldNames(arity)));
            streamFields.put(DST, new HashMap<>());
            WorkerTopologyContext context = new WorkerTopologyContext(topology, conf, taskToComponent,
                componentTasks, streamFields, "oracle-1-1", null, null, 6700,
                new ArrayList<>(taskToComponent.keySet()), new HashMap<>(), new HashMap<>());

            Grouping grouping = context.getTargets(SRC).get(STREAM).get(DST);
            this.outFields = context.getComponentOutputFields(SRC, STREAM);
            this.grouper = GrouperFactory.mkGrouper(context, SRC, STREAM, outFields, grouping,
                context.getComponentTasks(DST), conf);
            this.sortedTasks = new ArrayList<>(dstTasks);
            Collections.sort(this.sortedTasks);
        }

        int chooseIndex(List<Object> values) {
            List<Integer> chosen = grouper.chooseTasks(SRC_TASK, values);
            if (chosen == null || chosen.size() != 1) {
                throw new IllegalStateException("expected exactly one target, got " + chosen);
            }
            return sortedTasks.indexOf(chosen.get(0));
        }
    }

    // ---------------------------------------------------------------- vectors

    private static String javaType(Object v) {
        return v == null ? "null" : v.getClass().getSimpleName();
    }

    private static List<Object> valueVectors(List<Object> cases) throws Exception {
        List<Object> out = new ArrayList<>();
        for (Object c : cases) {
            Map<String, Object> in = asMap(c);
            List<Object> tuple = parseEmit((String) in.get("wire"));
            if (tuple.size() != 1) {
                throw new IllegalStateException("value case must be a 1-tuple: " + in.get("wire"));
            }
            Object v = tuple.get(0);
            List<Object> indices = new ArrayList<>();
            Fields groupFields = new Fields("f0");
            for (int n = 1; n <= MAX_N; n++) {
                indices.add(new Route(1, n, d -> d.fieldsGrouping(SRC, groupFields)).chooseIndex(tuple));
            }
            Map<String, Object> vec = new LinkedHashMap<>();
            vec.put("py", in.get("py"));
            vec.put("wire", in.get("wire"));
            vec.put("java_type", javaType(v));
            vec.put("hash", Objects.hashCode(v));
            // PartialKeyGrouping without fields keys on values.get(0).toString().getBytes().
            vec.put("to_string", v == null ? null : v.toString());
            vec.put("index", indices);
            out.add(vec);
        }
        return out;
    }

    private static int listHashCode(List<Object> keys) throws Exception {
        Method m = TupleUtils.class.getDeclaredMethod("listHashCode", List.class);
        m.setAccessible(true);
        return (Integer) m.invoke(null, keys);
    }

    private static List<Object> fieldsVectors(List<Object> cases) throws Exception {
        List<Object> out = new ArrayList<>();
        for (Object c : cases) {
            Map<String, Object> in = asMap(c);
            List<Object> tuple = parseEmit((String) in.get("wire"));
            List<Object> select = asList(in.get("fields"));
            Fields groupFields = selectNames(select);

            List<Object> types = new ArrayList<>();
            List<Object> hashes = new ArrayList<>();
            for (Object v : tuple) {
                types.add(javaType(v));
                hashes.add(Objects.hashCode(v));
            }
            List<Object> indices = new ArrayList<>();
            Fields outFields = null;
            for (int n = 1; n <= MAX_N; n++) {
                Route route = new Route(tuple.size(), n, d -> d.fieldsGrouping(SRC, groupFields));
                indices.add(route.chooseIndex(tuple));
                outFields = route.outFields;
            }
            Map<String, Object> vec = new LinkedHashMap<>();
            vec.put("py", in.get("py"));
            vec.put("wire", in.get("wire"));
            vec.put("fields", select);
            vec.put("java_types", types);
            vec.put("hashes", hashes);
            vec.put("deep_hash", listHashCode(outFields.select(groupFields, tuple)));
            vec.put("index", indices);
            out.add(vec);
        }
        return out;
    }

    private static List<Object> pkgVectors(List<Object> cases) throws Exception {
        List<Object> out = new ArrayList<>();
        for (Object c : cases) {
            Map<String, Object> in = asMap(c);
            int n = ((Number) in.get("n")).intValue();
            List<Object> select = in.get("fields") == null ? null : asList(in.get("fields"));
            List<Object> emits = asList(in.get("emits"));
            int arity = parseEmit((String) asMap(emits.get(0)).get("wire")).size();

            Map<Integer, Route> routes = new HashMap<>();
            List<Object> chosen = new ArrayList<>();
            for (Object e : emits) {
                Map<String, Object> emit = asMap(e);
                int emitter = ((Number) emit.get("emitter")).intValue();
                // One grouper per emitter, each deserialized afresh from the topology, as each executor does.
                Route route = routes.computeIfAbsent(emitter, k -> new Route(arity, n, d -> {
                    if (select == null) {
                        d.customGrouping(SRC, new PartialKeyGrouping());
                    } else {
                        d.partialKeyGrouping(SRC, selectNames(select));
                    }
                }));
                chosen.add(route.chooseIndex(parseEmit((String) emit.get("wire"))));
            }
            Map<String, Object> vec = new LinkedHashMap<>();
            vec.put("name", in.get("name"));
            vec.put("n", n);
            vec.put("fields", select);
            vec.put("emits", emits);
            vec.put("chosen", chosen);
            out.add(vec);
        }
        return out;
    }

    /**
     * java.util.Random draws, which RandomTwoTaskAssignmentCreator relies on; large bounds reach the
     * rejection loop of nextInt(bound) that real task counts never reach.
     */
    private static List<Object> randomVectors(List<Object> cases) {
        List<Object> out = new ArrayList<>();
        for (Object c : cases) {
            Map<String, Object> in = asMap(c);
            long seed = ((Number) in.get("seed")).longValue();
            int bound = ((Number) in.get("bound")).intValue();
            int count = ((Number) in.get("count")).intValue();
            java.util.Random random = new java.util.Random(seed);
            List<Object> draws = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                draws.add(random.nextInt(bound));
            }
            Map<String, Object> vec = new LinkedHashMap<>();
            vec.put("seed", seed);
            vec.put("bound", bound);
            vec.put("draws", draws);
            out.add(vec);
        }
        return out;
    }

    // ---------------------------------------------------------------- small helpers

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> asList(Object o) {
        return (List<Object>) o;
    }

    /** Minimal JSON writer; escapes every non-ASCII char so lone surrogates survive. */
    static final class Json {
        private Json() {
        }

        static void write(Object o, StringBuilder sb, int indent) {
            if (o == null) {
                sb.append("null");
            } else if (o instanceof String) {
                writeString((String) o, sb);
            } else if (o instanceof Integer || o instanceof Long || o instanceof Boolean) {
                sb.append(o);
            } else if (o instanceof Map) {
                Map<?, ?> m = (Map<?, ?>) o;
                if (m.isEmpty()) {
                    sb.append("{}");
                    return;
                }
                sb.append("{\n");
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) {
                        sb.append(",\n");
                    }
                    first = false;
                    pad(sb, indent + 1);
                    writeString(e.getKey().toString(), sb);
                    sb.append(": ");
                    write(e.getValue(), sb, indent + 1);
                }
                sb.append('\n');
                pad(sb, indent);
                sb.append('}');
            } else if (o instanceof List) {
                List<?> l = (List<?>) o;
                boolean scalars = l.stream().noneMatch(x -> x instanceof Map || x instanceof List);
                if (scalars) {
                    sb.append('[');
                    for (int i = 0; i < l.size(); i++) {
                        if (i > 0) {
                            sb.append(", ");
                        }
                        write(l.get(i), sb, indent);
                    }
                    sb.append(']');
                    return;
                }
                sb.append("[\n");
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) {
                        sb.append(",\n");
                    }
                    pad(sb, indent + 1);
                    write(l.get(i), sb, indent + 1);
                }
                sb.append('\n');
                pad(sb, indent);
                sb.append(']');
            } else {
                throw new IllegalArgumentException("cannot write " + o.getClass());
            }
        }

        private static void pad(StringBuilder sb, int indent) {
            for (int i = 0; i < indent; i++) {
                sb.append("  ");
            }
        }

        private static void writeString(String s, StringBuilder sb) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char ch = s.charAt(i);
                if (ch == '"' || ch == '\\') {
                    sb.append('\\').append(ch);
                } else if (ch >= 0x20 && ch < 0x7f) {
                    sb.append(ch);
                } else {
                    sb.append(String.format("\\u%04x", (int) ch));
                }
            }
            sb.append('"');
        }
    }
}
