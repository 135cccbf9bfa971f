package heronbridge.jvm.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The secret's pipe is read to its end (a pipe cannot seek, which readNBytes of a FileInputStream tries). */
class SecretTest {
    @Test
    void aPipeIsReadToItsEnd(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("secret");
        new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        Thread writer = new Thread(() -> {
            try {
                Files.write(fifo, new byte[32]);
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        });
        writer.start();
        try (InputStream in = new java.io.FileInputStream(fifo.toFile())) {
            assertEquals(32, Secret.readAll(in, 65).length);
        }
        writer.join();
    }
}
