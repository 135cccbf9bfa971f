package heronbridge.jvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/** Test helpers: hex, and the JSON vector files. */
public final class Hex {
    private Hex() {
    }

    public static byte[] bytes(Object hex) {
        return HexFormat.of().parseHex((String) hex);
    }

    public static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> json(Path path) throws IOException {
        return (Map<String, Object>) JSONValue.parse(Files.readString(path));
    }
}
