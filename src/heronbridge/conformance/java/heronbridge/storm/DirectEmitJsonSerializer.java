package heronbridge.storm;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.storm.multilang.BoltMsg;
import org.apache.storm.multilang.ISerializer;
import org.apache.storm.multilang.NoOutputException;
import org.apache.storm.multilang.ShellMsg;
import org.apache.storm.multilang.SpoutMsg;
import org.apache.storm.shade.net.minidev.json.JSONObject;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.shade.net.minidev.json.parser.ParseException;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.utils.Utils;

/**
 * Storm's JSON multilang protocol, as Storm's own JsonSerializer speaks it, with one
 * difference: the task of a direct emit may be any JSON number.
 *
 * <p>Storm 2's JsonSerializer casts an emit's "task" to Long, while its JSON parser
 * returns Integer for small numbers, so every direct emit from a multilang component ends
 * in a ClassCastException that kills the worker. Parsing is otherwise unchanged (the
 * same parser, so tuple values keep the types Storm gives them, which fields grouping
 * hashes), and so is everything written to the component.
 */
public class DirectEmitJsonSerializer implements ISerializer {
    private static final long serialVersionUID = 1L;
    private static final String END = "end";

    private transient BufferedWriter toComponent;
    private transient BufferedReader fromComponent;

    @Override
    public void initialize(OutputStream processIn, InputStream processOut) {
        toComponent = new BufferedWriter(new OutputStreamWriter(processIn, StandardCharsets.UTF_8));
        fromComponent = new BufferedReader(new InputStreamReader(processOut, StandardCharsets.UTF_8));
    }

    @Override
    public Number connect(Map<String, Object> conf, TopologyContext context)
        throws IOException, NoOutputException {
        JSONObject handshake = new JSONObject();
        handshake.put("pidDir", context.getPIDDir());
        handshake.put("conf", conf);
        handshake.put("context", context);
        write(handshake);
        return (Number) ((Map<?, ?>) read()).get("pid");
    }

    @Override
    @SuppressWarnings("unchecked")
    public ShellMsg readShellMsg() throws IOException, NoOutputException {
        Map<?, ?> message = (Map<?, ?>) read();
        ShellMsg shellMsg = new ShellMsg();
        String command = (String) message.get("command");
        shellMsg.setCommand(command);
        shellMsg.setId(message.get("id"));
        shellMsg.setMsg((String) message.get("msg"));
        Object stream = message.get("stream");
        shellMsg.setStream(stream == null ? Utils.DEFAULT_STREAM_ID : (String) stream);
        Object task = message.get("task");
        shellMsg.setTask(task == null ? 0 : ((Number) task).longValue());
        Object needTaskIds = message.get("need_task_ids");
        shellMsg.setNeedTaskIds(needTaskIds == null || (Boolean) needTaskIds);
        shellMsg.setTuple((List<Object>) message.get("tuple"));
        Object anchors = message.get("anchors");
        if (anchors instanceof String) {
            shellMsg.addAnchor((String) anchors);
        } else if (anchors != null) {
            for (Object anchor : (List<?>) anchors) {
                shellMsg.addAnchor((String) anchor);
            }
        }
        Object name = message.get("name");
        shellMsg.setMetricName(name instanceof String ? (String) name : null);
        shellMsg.setMetricParams(message.get("params"));
        Object level = message.get("level");
        if ("log".equals(command) && level instanceof Number) {
            shellMsg.setLogLevel(((Number) level).intValue());
        }
        return shellMsg;
    }

    @Override
    public void writeBoltMsg(BoltMsg boltMsg) throws IOException {
        JSONObject message = new JSONObject();
        message.put("id", boltMsg.getId());
        message.put("comp", boltMsg.getComp());
        message.put("stream", boltMsg.getStream());
        message.put("task", boltMsg.getTask());
        message.put("tuple", boltMsg.getTuple());
        write(message);
    }

    @Override
    public void writeSpoutMsg(SpoutMsg spoutMsg) throws IOException {
        JSONObject message = new JSONObject();
        message.put("command", spoutMsg.getCommand());
        message.put("id", spoutMsg.getId());
        write(message);
    }

    @Override
    public void writeTaskIds(List<Integer> taskIds) throws IOException {
        write(taskIds);
    }

    private void write(Object message) throws IOException {
        toComponent.write(JSONValue.toJSONString(message));
        toComponent.write("\n" + END + "\n");
        toComponent.flush();
    }

    private Object read() throws IOException, NoOutputException {
        StringBuilder text = new StringBuilder();
        while (true) {
            String line = fromComponent.readLine();
            if (line == null) {
                throw new NoOutputException("the component's stdout closed"
                    + (text.length() == 0 ? " before a message" : " inside a message: " + text));
            }
            if (line.equals(END)) {
                break;
            }
            if (text.length() > 0) {
                text.append('\n');
            }
            text.append(line);
        }
        try {
            return JSONValue.parseWithException(text.toString());
        } catch (ParseException e) {
            throw new IOException(e);
        }
    }
}
