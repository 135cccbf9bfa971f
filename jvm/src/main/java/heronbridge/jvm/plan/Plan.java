package heronbridge.jvm.plan;

import heronbridge.jvm.HostError;
import heronbridge.runtime.TopologyOuterClass;
import heronbridge.runtime.TopologyOuterClass.ComponentDecl;
import heronbridge.runtime.TopologyOuterClass.InputDecl;
import heronbridge.runtime.TopologyOuterClass.StreamDecl;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/**
 * The logical plan a task receives in its physical plan (runtime/plan/logical.py), read in
 * Java: components, streams, subscriptions, configs, and the task numbering both languages
 * share (Storm's rule: components sorted as Java strings, tasks from 1, system components
 * included).
 */
public final class Plan {
    public final String topologyId;
    public final String name;
    public final Map<String, Object> config;
    /** Components by name, in the order the Python side sorts them (code points). */
    public final Map<String, ComponentDecl> components;
    public final Map<Integer, String> taskComponent = new HashMap<>();
    public final Map<String, List<Integer>> componentTasks = new LinkedHashMap<>();
    /** Every (component, stream), indexed by the stream number data frames carry. */
    public final List<String[]> streams = new ArrayList<>();
    /** The components that run in the JVM task host; the others get what Storm's multilang gives. */
    public final Set<String> javaComponents = new HashSet<>();
    private final Map<String, Integer> streamIndex = new HashMap<>();

    /** Python's default string order: by code point (Java's compareTo is by UTF-16 unit). */
    public static final Comparator<String> CODE_POINTS = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    };

    public Plan(TopologyOuterClass.Topology topology) {
        topologyId = topology.getId();
        name = topology.getName();
        config = parseConfig(topology.getConfigJson(), name, null);
        Map<String, ComponentDecl> sorted = new TreeMap<>(CODE_POINTS);
        for (ComponentDecl c : topology.getComponentsList()) {
            sorted.put(c.getName(), c);
        }
        components = Collections.unmodifiableMap(new LinkedHashMap<>(sorted));
        Map<String, Integer> sizes = new TreeMap<>();  // Java string order, as Storm numbers tasks
        for (ComponentDecl c : topology.getComponentsList()) {
            sizes.put(c.getName(), c.getParallelism());
        }
        for (TopologyOuterClass.ReservedComponent r : topology.getReservedList()) {
            sizes.put(r.getName(), r.getTasks());
        }
        int next = 1;
        for (Map.Entry<String, Integer> e : sizes.entrySet()) {
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < e.getValue(); i++) {
                ids.add(next);
                taskComponent.put(next++, e.getKey());
            }
            componentTasks.put(e.getKey(), Collections.unmodifiableList(ids));
        }
        for (ComponentDecl c : components.values()) {
            if (ComponentSpec.isJava(c)) {
                javaComponents.add(c.getName());
            }
            Map<String, StreamDecl> outs = new TreeMap<>(CODE_POINTS);
            for (StreamDecl s : c.getOutputsList()) {
                outs.put(s.getName(), s);
            }
            for (String s : outs.keySet()) {
                streamIndex.put(c.getName() + "\0" + s, streams.size());
                streams.add(new String[] {c.getName(), s});
            }
        }
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> parseConfig(String json, String topology, String component) {
        if (json == null || json.isEmpty()) {
            return new HashMap<>();
        }
        Object parsed = JSONValue.parse(json);
        if (!(parsed instanceof Map)) {
            throw new HostError(HostError.where(topology, component, null) + ": expected a config as a JSON object, "
                + "received " + json);
        }
        return new HashMap<>((Map<String, Object>) parsed);
    }

    public int streamIndex(String component, String stream) {
        Integer i = streamIndex.get(component + "\0" + stream);
        return i == null ? -1 : i;
    }

    public StreamDecl stream(String component, String stream) {
        ComponentDecl c = components.get(component);
        if (c != null) {
            for (StreamDecl s : c.getOutputsList()) {
                if (s.getName().equals(stream)) {
                    return s;
                }
            }
        }
        return null;
    }

    /** The topology config overlaid with one component's own. */
    public Map<String, Object> componentConfig(String component) {
        Map<String, Object> out = new HashMap<>(config);
        out.putAll(parseConfig(components.get(component).getConfigJson(), name, component));
        return out;
    }

    /** (bolt, subscription) for every subscription to a component's stream, bolts in name order. */
    public List<Map.Entry<String, InputDecl>> subscribers(String component, String stream) {
        List<Map.Entry<String, InputDecl>> out = new ArrayList<>();
        for (ComponentDecl c : components.values()) {
            for (InputDecl in : c.getInputsList()) {
                if (in.getComponent().equals(component) && in.getStream().equals(stream)) {
                    out.add(Map.entry(c.getName(), in));
                }
            }
        }
        return out;
    }

    public int indexOf(int task) {
        return componentTasks.get(taskComponent.get(task)).indexOf(task);
    }
}
