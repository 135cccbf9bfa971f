package heronbridge.jvm.task;

import java.util.List;
import org.apache.storm.task.GeneralTopologyContext;
import org.apache.storm.tuple.MessageId;
import org.apache.storm.tuple.TupleImpl;

/**
 * A tuple as a bolt receives it: Storm's TupleImpl, carrying the runtime's ack bookkeeping
 * (its root and the XOR of its edge with the edges of what was emitted anchored to it).
 *
 * <p>Numbers cross between tasks as multilang values do: an integer arrives as an Integer
 * when it fits one, else a Long, whatever the sender's type. The typed getters convert, so
 * that a Java bolt's {@code getLong} reads a Long another Java task emitted as Storm's
 * would; {@code getValue} returns the value as it arrived.
 */
public final class HbTuple extends TupleImpl {
    long root;
    long edge;
    long[] pairs;

    HbTuple(GeneralTopologyContext context, List<Object> values, String component, int task, String stream,
            long root, long edge, long[] pairs) {
        super(context, values, component, task, stream,
            root > 0 ? MessageId.makeRootId(root, edge) : MessageId.makeUnanchored());
        this.root = root;
        this.edge = edge;
        this.pairs = pairs;
    }

    private Number number(int i) {
        return (Number) getValue(i);
    }

    @Override
    public Long getLong(int i) {
        Number n = number(i);
        return n == null || n instanceof Long ? (Long) n : Long.valueOf(n.longValue());
    }

    @Override
    public Integer getInteger(int i) {
        Number n = number(i);
        return n == null || n instanceof Integer ? (Integer) n : Integer.valueOf(Math.toIntExact(n.longValue()));
    }

    @Override
    public Short getShort(int i) {
        Number n = number(i);
        return n == null ? null : Short.valueOf(n.shortValue());
    }

    @Override
    public Byte getByte(int i) {
        Number n = number(i);
        return n == null ? null : Byte.valueOf(n.byteValue());
    }

    @Override
    public Double getDouble(int i) {
        Number n = number(i);
        return n == null || n instanceof Double ? (Double) n : Double.valueOf(n.doubleValue());
    }

    @Override
    public Float getFloat(int i) {
        Number n = number(i);
        return n == null ? null : Float.valueOf(n.floatValue());
    }

    @Override
    public Long getLongByField(String field) {
        return getLong(fieldIndex(field));
    }

    @Override
    public Integer getIntegerByField(String field) {
        return getInteger(fieldIndex(field));
    }

    @Override
    public Short getShortByField(String field) {
        return getShort(fieldIndex(field));
    }

    @Override
    public Byte getByteByField(String field) {
        return getByte(fieldIndex(field));
    }

    @Override
    public Double getDoubleByField(String field) {
        return getDouble(fieldIndex(field));
    }

    @Override
    public Float getFloatByField(String field) {
        return getFloat(fieldIndex(field));
    }
}
