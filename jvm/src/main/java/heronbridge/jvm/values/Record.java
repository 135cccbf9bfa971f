package heronbridge.jvm.values;

import java.util.List;

/**
 * One tuple on the wire: its values and, when tracked, its root and edge ({@code [values]},
 * {@code [values, root, edge]}), or several roots ({@code [values, -1, [0, root, edge, ...]]}).
 */
public final class Record {
    public static final long MULTI = -1;

    public final List<Object> values;
    public final long root;
    public final long edge;
    /** For MULTI: {0, root1, edge1, root2, edge2, ...} (the first slot is the XOR of later emits). */
    public final long[] pairs;
    /** Why a value of it could not be read (Storm's Kryo refused its bytes); null when it was. */
    public final String unreadable;

    public Record(List<Object> values, long root, long edge, long[] pairs) {
        this(values, root, edge, pairs, null);
    }

    public Record(List<Object> values, long root, long edge, long[] pairs, String unreadable) {
        this.values = values;
        this.root = root;
        this.edge = edge;
        this.pairs = pairs;
        this.unreadable = unreadable;
    }
}
