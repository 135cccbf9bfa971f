package heronbridge.jvm.task;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;

/** A Java bean, as topologies emit them: private fields with getters and setters, a public field, a no-argument constructor. */
public class Point implements Serializable {
    private String name;
    private int count;
    private Date when;
    private List<String> tags = new ArrayList<>();
    public double weight;

    public Point() {
    }

    public Point(String name, int count, Date when, List<String> tags, double weight) {
        this.name = name;
        this.count = count;
        this.when = when;
        this.tags = new ArrayList<>(tags);
        this.weight = weight;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public int getCount() {
        return count;
    }

    public void setCount(int count) {
        this.count = count;
    }

    public Date getWhen() {
        return when;
    }

    public void setWhen(Date when) {
        this.when = when;
    }

    public List<String> getTags() {
        return tags;
    }

    public void setTags(List<String> tags) {
        this.tags = tags;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Point)) {
            return false;
        }
        Point p = (Point) o;
        return count == p.count && weight == p.weight && Objects.equals(name, p.name) && Objects.equals(when, p.when)
            && Objects.equals(tags, p.tags);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, count, when, tags, weight);
    }

    /** Not Serializable and never registered: Storm's Kryo refuses it under any config. */
    public static final class Opaque {
        public int x = 1;
    }
}
