package heronbridge.jvm.wire;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The dialer's side of the link handshake, version 2 (runtime/wire/PROTOCOL.md):
 *
 * <pre>
 *   dialer -> listener   "HBA2" u8(len(role)) role nonce_d field(identity)
 *   listener -> dialer   "HBA2" nonce_l proof_l
 *   dialer -> listener   proof_d
 *   listener -> dialer   0x01
 * </pre>
 *
 * The proofs are HMAC-SHA256 over the whole transcript, bound to the identity this side
 * dialled, so a relay to another listener fails; the session keys derive from it too.
 */
public final class Handshake {
    public static final byte[] MAGIC = "HBA2".getBytes(StandardCharsets.US_ASCII);
    public static final int NONCE = 32;
    public static final int MAC = 32;
    public static final int CHALLENGE = MAGIC.length + NONCE + MAC;
    public static final byte OK = 1;
    public static final long HANDSHAKE_MILLIS = 5000;
    public static final String TASK = "task";

    private Handshake() {
    }

    static void field(ByteArrayOutputStream out, byte[] raw) {
        out.write(raw.length & 0xff);
        out.write(raw.length >>> 8 & 0xff);
        out.write(raw, 0, raw.length);
    }

    static byte[] field(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        field(out, text.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    public static byte[] hello(String role, byte[] nonce, Identity identity) {
        byte[] raw = role.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(MAGIC, 0, MAGIC.length);
        out.write(raw.length);
        out.write(raw, 0, raw.length);
        out.write(nonce, 0, nonce.length);
        field(out, identity.encode());
        return out.toByteArray();
    }

    public static byte[] transcript(String role, byte[] identity, byte[] dialerNonce, byte[] listenerNonce) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(MAGIC, 0, MAGIC.length);
        field(out, role.getBytes(StandardCharsets.UTF_8));
        field(out, identity);
        out.write(dialerNonce, 0, dialerNonce.length);
        out.write(listenerNonce, 0, listenerNonce.length);
        return out.toByteArray();
    }

    public static byte[] hmac(byte[] key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            for (byte[] part : parts) {
                mac.update(part);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    public static byte[] proof(byte[] secret, String side, byte[] transcript) {
        return hmac(secret, field(side), transcript);
    }

    /** (dialer-to-listener key, listener-to-dialer key) of one handshake. */
    public static byte[][] keys(byte[] secret, byte[] transcript) {
        byte[] session = hmac(secret, field("session"), transcript);
        return new byte[][] {hmac(session, field("dialer->listener")), hmac(session, field("listener->dialer"))};
    }

    /**
     * Check the listener's challenge for the identity we dialled; return our proof and the
     * transcript. Throws AuthError if the listener did not prove the secret.
     */
    public static byte[][] answer(byte[] secret, String role, byte[] nonce, Identity expect, byte[] challenge) {
        for (int i = 0; i < MAGIC.length; i++) {
            if (challenge[i] != MAGIC[i]) {
                throw new AuthError("expected a handshake reply, received bytes that are not one");
            }
        }
        byte[] theirs = java.util.Arrays.copyOfRange(challenge, MAGIC.length, MAGIC.length + NONCE);
        byte[] said = java.util.Arrays.copyOfRange(challenge, MAGIC.length + NONCE, CHALLENGE);
        byte[] t = transcript(role, expect.encode(), nonce, theirs);
        if (!MessageDigest.isEqual(said, proof(secret, "listener", t))) {
            throw new AuthError("the listener did not prove the topology's secret for " + expect);
        }
        return new byte[][] {proof(secret, "dialer", t), t};
    }

    /** A peer did not prove the topology's secret, or refused our proof. */
    public static final class AuthError extends RuntimeException {
        public AuthError(String message) {
            super(message);
        }
    }
}
