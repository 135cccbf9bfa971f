package heronbridge.jvm.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import heronbridge.jvm.Hex;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The link protocol's test vectors (runtime/wire/protocol_vectors.json, written by the
 * Python side): every byte the JVM host sends or checks must match them.
 */
class ProtocolVectorsTest {
    static final Path VECTORS = Path.of(System.getProperty("heronbridge.vectors",
        "../src/heronbridge/runtime/wire/protocol_vectors.json"));

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> cases() throws Exception {
        Map<String, Object> all = Hex.json(VECTORS);
        assertEquals("HBA2", all.get("protocol"));
        List<Map<String, Object>> cases = (List<Map<String, Object>>) all.get("cases");
        assertFalse(cases.isEmpty());
        return cases;
    }

    @SuppressWarnings("unchecked")
    static Identity identity(Map<String, Object> c) {
        Map<String, Object> id = (Map<String, Object>) c.get("identity");
        return new Identity((String) id.get("topology"), (String) id.get("name"), (String) id.get("address"));
    }

    @Test
    void handshakeBytes() throws Exception {
        for (Map<String, Object> c : cases()) {
            byte[] secret = Hex.bytes(c.get("secret"));
            String role = (String) c.get("role");
            Identity id = identity(c);
            byte[] nonceD = Hex.bytes(c.get("nonce_d"));
            byte[] nonceL = Hex.bytes(c.get("nonce_l"));
            assertEquals(c.get("identity_bytes"), Hex.hex(id.encode()));
            assertEquals(c.get("hello"), Hex.hex(Handshake.hello(role, nonceD, id)));
            byte[] t = Handshake.transcript(role, id.encode(), nonceD, nonceL);
            assertEquals(c.get("transcript"), Hex.hex(t));
            assertEquals(c.get("proof_l"), Hex.hex(Handshake.proof(secret, "listener", t)));
            assertEquals(c.get("proof_d"), Hex.hex(Handshake.proof(secret, "dialer", t)));
            byte[][] answer = Handshake.answer(secret, role, nonceD, id, Hex.bytes(c.get("challenge")));
            assertEquals(c.get("proof_d"), Hex.hex(answer[0]));
            byte[][] keys = Handshake.keys(secret, t);
            assertEquals(c.get("k_dl"), Hex.hex(keys[0]));
            assertEquals(c.get("k_ld"), Hex.hex(keys[1]));
            assertEquals(c.get("sealed"), id.sealed());
        }
    }

    @Test
    void aChallengeForAnotherIdentityOrSecretIsRefused() throws Exception {
        for (Map<String, Object> c : cases()) {
            byte[] secret = Hex.bytes(c.get("secret"));
            Identity id = identity(c);
            Identity other = new Identity(id.topology, id.name + "x", id.address);
            byte[] challenge = Hex.bytes(c.get("challenge"));
            byte[] nonceD = Hex.bytes(c.get("nonce_d"));
            String role = (String) c.get("role");
            assertThrows(Handshake.AuthError.class, () -> Handshake.answer(secret, role, nonceD, other, challenge));
            byte[] wrong = secret.clone();
            wrong[0] ^= 1;
            assertThrows(Handshake.AuthError.class, () -> Handshake.answer(wrong, role, nonceD, id, challenge));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void recordsBothWays() throws Exception {
        for (Map<String, Object> c : cases()) {
            if (!Boolean.TRUE.equals(c.get("sealed"))) {
                continue;
            }
            byte[][] keys = Handshake.keys(Hex.bytes(c.get("secret")), Hex.bytes(c.get("transcript")));
            Sealing dl = new Sealing(keys[0]);
            Sealing ld = new Sealing(keys[1]);
            Sealing dlOpen = new Sealing(keys[0]);
            Sealing ldOpen = new Sealing(keys[1]);
            for (Map<String, Object> r : (List<Map<String, Object>>) c.get("records")) {
                boolean fromDialer = "dialer->listener".equals(r.get("direction"));
                List<Object> frames = (List<Object>) r.get("frames");
                byte[][] chunks = new byte[frames.size()][];
                for (int i = 0; i < chunks.length; i++) {
                    chunks[i] = Hex.bytes(frames.get(i));
                }
                java.nio.ByteBuffer[] parts = (fromDialer ? dl : ld).seal(chunks, 0, chunks.length);
                java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                for (java.nio.ByteBuffer p : parts) {
                    byte[] b = new byte[p.remaining()];
                    p.get(b);
                    out.write(b);
                }
                byte[] record = out.toByteArray();
                assertEquals(r.get("record"), Hex.hex(record), "record seq " + r.get("seq"));
                int n = record.length - 4 - Sealing.TAG;
                assertTrue((fromDialer ? dlOpen : ldOpen).open(record, 4, n, record, 4 + n));
            }
        }
    }

    @Test
    void aReplayedOrAlteredRecordFails() {
        byte[] key = new byte[32];
        Sealing sender = new Sealing(key);
        Sealing receiver = new Sealing(key);
        byte[] first = sender.sealBytes(new byte[] {1, 2, 3});
        byte[] second = sender.sealBytes(new byte[] {4, 5, 6});
        assertTrue(receiver.open(first, 4, 3, first, 7));
        assertFalse(receiver.open(first, 4, 3, first, 7), "a replay of record 0 as record 1");
        Sealing fresh = new Sealing(key);
        second[5] ^= 1;
        fresh.open(first, 4, 3, first, 7);
        assertFalse(fresh.open(second, 4, 3, second, 7), "an altered byte");
        assertArrayEquals(new byte[] {3, 0, 0, 0}, java.util.Arrays.copyOf(first, 4));
    }
}
