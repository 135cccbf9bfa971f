package heronbridge.jvm.plan;

import heronbridge.runtime.TopologyOuterClass;
import heronbridge.runtime.TopologyOuterClass.ComponentDecl;
import heronbridge.runtime.TopologyOuterClass.InputDecl;
import heronbridge.runtime.TopologyOuterClass.StreamDecl;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.storm.Constants;
import org.apache.storm.generated.Bolt;
import org.apache.storm.generated.ComponentCommon;
import org.apache.storm.generated.ComponentObject;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.generated.Grouping;
import org.apache.storm.generated.JavaObject;
import org.apache.storm.generated.NodeInfo;
import org.apache.storm.generated.NullStruct;
import org.apache.storm.generated.ShellComponent;
import org.apache.storm.generated.SpoutSpec;
import org.apache.storm.generated.StateSpoutSpec;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.StreamInfo;
import org.apache.storm.metric.api.IMetric;
import org.apache.storm.metrics2.StormMetricRegistry;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.tuple.Fields;
import org.apache.storm.utils.Utils;

/**
 * The plan as Storm's own classes describe it: a StormTopology (Thrift) built from the
 * logical plan, and the TopologyContext and WorkerTopologyContext Storm gives a component
 * and its custom groupings. Storm's code then answers sources, targets, task indexes and
 * output fields itself.
 *
 * <p>The "worker" of a task is its container: its worker tasks are the tasks behind the
 * same stream manager, and its worker port is the container's number.
 */
public final class StormView {
    public static final String COMPONENT_KEY = "heronbridge.java.component";
    public static final String SYSTEM = Constants.SYSTEM_COMPONENT_ID;

    public final Plan plan;
    public final int task;
    public final int container;
    public final List<Integer> workerTasks;
    public final StormTopology topology;
    public final Map<Integer, String> taskToComponent;
    public final Map<String, List<Integer>> componentToSortedTasks;
    public final Map<String, Map<String, Fields>> componentToStreamToFields;
    public final String codeDir;
    public final String pidDir;

    public StormView(Plan plan, int task, int container, List<Integer> workerTasks, String codeDir, String pidDir) {
        this.plan = plan;
        this.task = task;
        this.container = container;
        this.workerTasks = new ArrayList<>(workerTasks);
        this.codeDir = codeDir;
        this.pidDir = pidDir;
        taskToComponent = new HashMap<>(plan.taskComponent);
        taskToComponent.put((int) Constants.SYSTEM_TASK_ID, SYSTEM);
        componentToSortedTasks = new HashMap<>(plan.componentTasks);
        componentToSortedTasks.put(SYSTEM, List.of((int) Constants.SYSTEM_TASK_ID));
        componentToStreamToFields = new HashMap<>();
        for (ComponentDecl c : plan.components.values()) {
            Map<String, Fields> streams = new HashMap<>();
            for (StreamDecl s : c.getOutputsList()) {
                streams.put(s.getName(), new Fields(s.getFieldsList()));
            }
            componentToStreamToFields.put(c.getName(), streams);
        }
        Map<String, Fields> system = new HashMap<>();
        system.put(Constants.SYSTEM_TICK_STREAM_ID, new Fields("rate_secs"));
        componentToStreamToFields.put(SYSTEM, system);
        topology = stormTopology(plan);
    }

    /** Storm's Thrift grouping for one subscription. */
    public static Grouping grouping(InputDecl in) {
        switch (in.getGrouping()) {
            case SHUFFLE: return Grouping.shuffle(new NullStruct());
            case FIELDS: return Grouping.fields(new ArrayList<>(in.getFieldsList()));
            case ALL: return Grouping.all(new NullStruct());
            case GLOBAL: return Grouping.fields(new ArrayList<>());
            case NONE: return Grouping.none(new NullStruct());
            case DIRECT: return Grouping.direct(new NullStruct());
            case LOCAL_OR_SHUFFLE: return Grouping.local_or_shuffle(new NullStruct());
            case PARTIAL_KEY:
                return Grouping.custom_object(new JavaObject("org.apache.storm.grouping.PartialKeyGrouping", List.of()));
            case CUSTOM:
                return Grouping.custom_object(new JavaObject(in.getCustom(), List.of()));
            default:
                throw new IllegalArgumentException("unknown grouping " + in.getGrouping());
        }
    }

    private static StormTopology stormTopology(Plan plan) {
        Map<String, SpoutSpec> spouts = new HashMap<>();
        Map<String, Bolt> bolts = new HashMap<>();
        for (ComponentDecl c : plan.components.values()) {
            Map<GlobalStreamId, Grouping> inputs = new HashMap<>();
            for (InputDecl in : c.getInputsList()) {
                inputs.put(new GlobalStreamId(in.getComponent(), in.getStream()), grouping(in));
            }
            Map<String, StreamInfo> streams = new HashMap<>();
            for (StreamDecl s : c.getOutputsList()) {
                streams.put(s.getName(), new StreamInfo(new ArrayList<>(s.getFieldsList()), s.getDirect()));
            }
            ComponentCommon common = new ComponentCommon(inputs, streams);
            common.set_parallelism_hint(c.getParallelism());
            common.set_json_conf(c.getConfigJson().isEmpty() ? "{}" : c.getConfigJson());
            ComponentObject object = componentObject(c);
            if (c.getKind() == TopologyOuterClass.ComponentKind.SPOUT) {
                spouts.put(c.getName(), new SpoutSpec(object, common));
            } else {
                bolts.put(c.getName(), new Bolt(object, common));
            }
        }
        return new StormTopology(spouts, bolts, new HashMap<String, StateSpoutSpec>());
    }

    /** What a component is, as Storm would show it: a Java class, or a shell command for the others. */
    private static ComponentObject componentObject(ComponentDecl c) {
        ComponentSpec spec = ComponentSpec.of(c);
        if (spec != null && spec.className != null) {
            return ComponentObject.java_object(new JavaObject(spec.className, List.of()));
        }
        if (spec != null) {
            return ComponentObject.java_object(new JavaObject(Object.class.getName(), List.of()));
        }
        return ComponentObject.shell(new ShellComponent("python", c.getClassPath()));
    }

    /** The conf a component sees: Storm's defaults, the topology's config, then its own. */
    public Map<String, Object> conf(String component, Map<String, Object> componentDefaults) {
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.putAll(plan.config);
        if (componentDefaults != null) {
            conf.putAll(componentDefaults);
        }
        conf.putAll(plan.componentConfig(component));
        conf.put("storm.id", plan.topologyId);
        conf.put("topology.name", plan.name);
        return conf;
    }

    public TopologyContext topologyContext(Map<String, Object> conf) {
        return new TopologyContext(topology, conf, taskToComponent, componentToSortedTasks,
            componentToStreamToFields, new HashMap<>(), plan.topologyId, codeDir, pidDir, task, container,
            workerTasks, new HashMap<>(), new HashMap<>(), new HashMap<>(),
            new HashMap<Integer, Map<Integer, Map<String, IMetric>>>(), new AtomicBoolean(false),
            new StormMetricRegistry());
    }

    /** The context custom groupings are prepared with, as a Storm worker's. */
    public WorkerTopologyContext workerContext(Map<String, Object> conf) {
        Map<Integer, NodeInfo> nodePorts = new HashMap<>();
        for (Integer t : plan.taskComponent.keySet()) {
            boolean local = workerTasks.contains(t);
            // Tasks behind this stream manager share its node and port; the others are elsewhere.
            nodePorts.put(t, new NodeInfo(local ? "container-" + container : "elsewhere",
                new HashSet<>(List.of(local ? (long) container : -1L))));
        }
        Map<String, String> nodeToHost = new HashMap<>();
        nodeToHost.put("container-" + container, "localhost");
        return new WorkerTopologyContext(topology, conf, taskToComponent, componentToSortedTasks,
            componentToStreamToFields, plan.topologyId, codeDir, pidDir, container, workerTasks,
            new HashMap<>(), new HashMap<>(), new AtomicReference<>(nodePorts), "container-" + container,
            new AtomicReference<>(nodeToHost));
    }
}
