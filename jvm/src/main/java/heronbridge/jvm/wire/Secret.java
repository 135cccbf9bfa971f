package heronbridge.jvm.wire;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * The topology's secret, read from the pipe the executor handed this process, named by
 * $HERONBRIDGE_SECRET_FD (never the environment or the command line). Read to its end:
 * the pipe is then empty, and a process this JVM starts does not inherit the descriptor
 * (Java's process launcher closes every descriptor but the standard three).
 */
public final class Secret {
    public static final String FD_ENV = "HERONBRIDGE_SECRET_FD";
    public static final int KEY = 32;

    private Secret() {
    }

    public static byte[] inherited() {
        String text = System.getenv(FD_ENV);
        byte[] keys = new byte[0];
        if (text != null && text.matches("\\d+")) {
            try (InputStream pipe = new FileInputStream("/proc/self/fd/" + text)) {
                keys = readAll(pipe, 2 * KEY + 1);
            } catch (IOException e) {
                keys = new byte[0];
            }
        }
        if (keys.length != KEY && keys.length != 2 * KEY) {
            throw new Handshake.AuthError("expected the topology's secret on the inherited descriptor $" + FD_ENV
                + " (" + (text == null ? "unset" : text) + "), received " + keys.length + " bytes");
        }
        return Arrays.copyOf(keys, KEY);
    }

    /** Up to `most` bytes, to the pipe's end (FileInputStream.readNBytes seeks, which a pipe refuses). */
    static byte[] readAll(InputStream in, int most) throws IOException {
        byte[] buf = new byte[most];
        int got = 0;
        while (got < most) {
            int n = in.read(buf, got, most - got);
            if (n < 0) {
                break;
            }
            got += n;
        }
        return Arrays.copyOf(buf, got);
    }
}
