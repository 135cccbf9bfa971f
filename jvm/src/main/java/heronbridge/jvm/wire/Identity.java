package heronbridge.jvm.wire;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Whom a dialer means to reach (PROTOCOL.md): a topology's listener by name, at an address
 * exactly as published ({@code tcp:HOST:PORT} or {@code unix:PATH}).
 */
public final class Identity {
    public final String topology;
    public final String name;
    public final String address;

    public Identity(String topology, String name, String address) {
        this.topology = topology;
        this.name = name;
        this.address = address;
    }

    public static Identity unix(String topology, String name, String path) {
        return new Identity(topology, name, "unix:" + path);
    }

    public static Identity tcp(String topology, String name, String host, int port) {
        return new Identity(topology, name, "tcp:" + host + ":" + port);
    }

    /** Frames travel in authenticated records on TCP; the kernel vouches for a Unix socket's peer. */
    public boolean sealed() {
        return address.startsWith("tcp:");
    }

    public byte[] encode() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String part : new String[] {topology, name, address}) {
            byte[] raw = part.getBytes(StandardCharsets.UTF_8);
            Handshake.field(out, raw);
        }
        return out.toByteArray();
    }

    @Override
    public String toString() {
        return name + " of " + topology + " at " + address;
    }
}
