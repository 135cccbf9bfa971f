package jvmtests.beans;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;

/**
 * A Java bean as topologies emit them: private fields with getters and setters, a public
 * field, a Date, a list; not Serializable, so only Storm's Kryo (with the class registered)
 * carries it between workers.
 */
public class Reading {
    private long id;
    private String sensor;
    private Date taken;
    private List<String> tags = new ArrayList<>();
    public double value;

    public Reading() {
    }

    /** The reading numbered {@code id}: both ends of an edge make the same one. */
    public static Reading of(long id) {
        Reading r = new Reading();
        r.id = id;
        r.sensor = "sensor-" + (id % 3);
        r.taken = new Date(1_700_000_000_000L + id * 1000);
        r.tags = new ArrayList<>(List.of("t" + id, id % 2 == 0 ? "even" : "odd"));
        r.value = id + 0.5;
        return r;
    }

    /**
     * The values emitted beside reading {@code id}: a Character, an infinite double (+ or -
     * by id), a list holding a float infinity, a Character, and a map of a Character
     * and -Infinity, and a list of a Float, a Short, a Byte and a BigDecimal. json-smart
     * writes a Character as {} and an infinity as null: what a Python task sees of them
     * differs from what a Java one does; the numbers reach a Java task as their own classes
     * (Storm's Kryo), a Python one as JSON numbers. (NaN is not among them: json-smart
     * writes it as NaN, which the Python task's reader refuses.)
     */
    public static List<Object> extras(long id) {
        java.util.HashMap<String, Object> map = new java.util.HashMap<>();
        map.put("c", (char) ('A' + id % 26));
        map.put("low", Double.NEGATIVE_INFINITY);
        List<Object> extremes = new ArrayList<>(List.of(Float.POSITIVE_INFINITY, 'z', map));
        List<Object> numbers = new ArrayList<>(List.of(1.1f, (short) id, (byte) -id, new BigDecimal("1.10")));
        return List.of((char) ('a' + id % 26), id % 2 == 0 ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY,
            extremes, numbers);
    }

    public long getId() {
        return id;
    }

    public void setId(long id) {
        this.id = id;
    }

    public String getSensor() {
        return sensor;
    }

    public void setSensor(String sensor) {
        this.sensor = sensor;
    }

    public Date getTaken() {
        return taken;
    }

    public void setTaken(Date taken) {
        this.taken = taken;
    }

    public List<String> getTags() {
        return tags;
    }

    public void setTags(List<String> tags) {
        this.tags = tags;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Reading)) {
            return false;
        }
        Reading r = (Reading) o;
        return id == r.id && value == r.value && Objects.equals(sensor, r.sensor) && Objects.equals(taken, r.taken)
            && Objects.equals(tags, r.tags);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, sensor, taken, tags, value);
    }

    @Override
    public String toString() {
        return "Reading(" + id + ", " + sensor + ", " + taken.getTime() + ", " + tags + ", " + value + ")";
    }
}
