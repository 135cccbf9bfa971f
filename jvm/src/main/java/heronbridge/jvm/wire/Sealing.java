package heronbridge.jvm.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The record layer of a TCP link (PROTOCOL.md): {@code u32(n) payload tag16} with
 * {@code tag = HMAC-SHA256(key, u64(seq) u32(n) payload)[:16]}; seq counts one direction's
 * records from 0 and is never sent.
 */
public final class Sealing {
    public static final int TAG = 16;
    public static final int MAX_RECORD = Frames.MAX_FRAME + 4;

    private final Mac mac;
    private long seq;
    private final ByteBuffer head = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);

    public Sealing(byte[] key) {
        try {
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    private byte[] tag(byte[][] chunks, int from, int to, int size) {
        head.clear();
        head.putLong(seq++).putInt(size);
        mac.update(head.array(), 0, 12);
        for (int i = from; i < to; i++) {
            mac.update(chunks[i]);
        }
        return Arrays.copyOf(mac.doFinal(), TAG);
    }

    /** Seal chunks[from, to) (whole frames, at most MAX_RECORD bytes) into one record: header, chunks, tag. */
    public ByteBuffer[] seal(byte[][] chunks, int from, int to) {
        int size = 0;
        for (int i = from; i < to; i++) {
            size += chunks[i].length;
        }
        byte[] tag = tag(chunks, from, to, size);
        ByteBuffer[] out = new ByteBuffer[to - from + 2];
        out[0] = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, size);
        for (int i = from; i < to; i++) {
            out[i - from + 1] = ByteBuffer.wrap(chunks[i]);
        }
        out[out.length - 1] = ByteBuffer.wrap(tag);
        return out;
    }

    /** The record of one payload, as bytes. */
    public byte[] sealBytes(byte[] payload) {
        ByteBuffer[] parts = seal(new byte[][] {payload}, 0, 1);
        ByteBuffer out = ByteBuffer.allocate(4 + payload.length + TAG);
        for (ByteBuffer part : parts) {
            out.put(part);
        }
        return out.array();
    }

    /** Check a received record's tag over payload[off, off+n); false if it was forged or out of order. */
    public boolean open(byte[] buf, int off, int n, byte[] buf2, int tagAt) {
        head.clear();
        head.putLong(seq++).putInt(n);
        mac.update(head.array(), 0, 12);
        mac.update(buf, off, n);
        byte[] expect = Arrays.copyOf(mac.doFinal(), TAG);
        return MessageDigest.isEqual(expect, Arrays.copyOfRange(buf2, tagAt, tagAt + TAG));
    }
}
