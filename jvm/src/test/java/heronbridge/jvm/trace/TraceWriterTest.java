package heronbridge.jvm.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import heronbridge.jvm.Hex;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A trace file byte for byte as the Python tracing hook writes it (scripts/jvm_vectors.py). */
class TraceWriterTest {
    static final Path VECTORS = Path.of("src/test/resources/frame_vectors.json");

    /** The vectors' JSON form: {"map": [[k, v]...]} an ordered map, {"bin": hex} bytes. */
    @SuppressWarnings("unchecked")
    static Object java(Object v) {
        if (v instanceof Map) {
            Map<String, Object> m = (Map<String, Object>) v;
            if (m.containsKey("bin")) {
                return Hex.bytes(m.get("bin"));
            }
            Map<String, Object> out = new LinkedHashMap<>();
            for (Object pair : (List<Object>) m.get("map")) {
                List<Object> kv = (List<Object>) pair;
                out.put((String) kv.get(0), java(kv.get(1)));
            }
            return out;
        }
        if (v instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object x : (List<Object>) v) {
                out.add(java(x));
            }
            return out;
        }
        return v;
    }

    @Test
    @SuppressWarnings("unchecked")
    void aFileAsTheTracingHookWritesIt(@TempDir Path dir) throws Exception {
        Map<String, Object> vector = (Map<String, Object>) Hex.json(VECTORS).get("trace");
        Path path = dir.resolve("count-3-4242.trace");
        try (TraceWriter w = new TraceWriter(path, (Map<String, Object>) java(vector.get("file_head")))) {
            for (Object b : (List<Object>) vector.get("blocks")) {
                Map<String, Object> block = (Map<String, Object>) b;
                w.block((Map<String, Object>) java(block.get("head")), (List<Object>) java(block.get("rows")));
            }
        }
        assertEquals(vector.get("bytes"), Hex.hex(Files.readAllBytes(path)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(path)));
    }

    @Test
    void aValueNoRecordHoldsIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> TraceWriter.pack(List.of(new Object())));
    }
}
