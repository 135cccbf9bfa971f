package heronbridge.jvm.wire;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Timer;
import java.util.TimerTask;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * A task's authenticated link to a listener (its stream manager, its metrics manager).
 *
 * <p>The handshake runs before any frame. Then a reader thread turns what arrives into
 * batches of whole frames on a bounded queue (when the task falls behind, the queue fills,
 * the reader stops reading, and the stream manager sees its buffer for this task grow:
 * backpressure), and the task's own thread writes with blocking writes (a stream manager
 * that stops reading a spout stops the spout, as Heron's Java instance is stopped).
 */
public final class Link implements AutoCloseable {
    public static final int READ_SIZE = 256 << 10;
    public static final int QUEUE_BATCHES = 64;

    private final SocketChannel channel;
    private final Sealing sealer;
    private final Sealing opener;
    private final BlockingQueue<Batch> inbound = new ArrayBlockingQueue<>(QUEUE_BATCHES);
    private volatile boolean closed;
    /** Nanoseconds the task's thread spent in writes the peer was slow to take. */
    public long blockedNanos;

    /** Whole frames read at once: frame i spans data[offsets[2i], offsets[2i+1]); lost != null ends the link. */
    public static final class Batch {
        public final byte[] data;
        public final int[] offsets;
        public final int count;
        public final String lost;

        public Batch(byte[] data, int[] offsets, int count, String lost) {
            this.data = data;
            this.offsets = offsets;
            this.count = count;
            this.lost = lost;
        }
    }

    private Link(SocketChannel channel, Sealing sealer, Sealing opener) {
        this.channel = channel;
        this.sealer = sealer;
        this.opener = opener;
    }

    /** Connect to `identity`'s address, prove the secret as `role`, and start reading. */
    public static Link dial(Identity identity, byte[] secret, String role, boolean reader) throws IOException {
        // The nonce and the proof, made once before connecting: the JVM's first SecureRandom
        // and HMAC load their providers, which on a loaded host took seconds of the
        // listener's handshake window.
        byte[] nonce = new byte[Handshake.NONCE];
        new SecureRandom().nextBytes(nonce);
        Handshake.hmac(nonce, nonce);
        SocketChannel ch;
        String address = identity.address;
        if (address.startsWith("unix:")) {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                ch.connect(UnixDomainSocketAddress.of(address.substring(5)));
                checkPeer(ch);
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
        } else if (address.startsWith("tcp:")) {
            String hostPort = address.substring(4);
            int colon = hostPort.lastIndexOf(':');
            String host = hostPort.substring(0, colon).replace("[", "").replace("]", "");
            ch = SocketChannel.open();
            try {
                ch.connect(new InetSocketAddress(host, Integer.parseInt(hostPort.substring(colon + 1))));
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
        } else {
            throw new IllegalArgumentException("expected an address tcp:HOST:PORT or unix:PATH, received " + address);
        }
        byte[][] keys;
        Timer watchdog = new Timer("handshake-watchdog", true);
        watchdog.schedule(new TimerTask() {
            @Override
            public void run() {
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // closing unblocks the handshake's read, which then fails
                }
            }
        }, Handshake.HANDSHAKE_MILLIS);
        try {
            keys = handshake(ch, secret, role, identity, nonce);
        } catch (IOException e) {
            ch.close();
            throw new Handshake.AuthError("the listener " + identity + " closed the connection during the handshake"
                + " (it refused our proof, or it is not this topology's): " + e);
        } catch (RuntimeException e) {
            ch.close();
            throw e;
        } finally {
            watchdog.cancel();
        }
        Link link = identity.sealed()
            ? new Link(ch, new Sealing(keys[0]), new Sealing(keys[1]))
            : new Link(ch, null, null);
        if (reader) {
            Thread t = new Thread(link::readLoop, "heronbridge-link-reader");
            t.setDaemon(true);
            t.start();
        }
        return link;
    }

    /** On a Unix socket the peer must run as this user (SO_PEERCRED). */
    private static void checkPeer(SocketChannel ch) throws IOException {
        UnixDomainPrincipal peer = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
        String me = System.getProperty("user.name");
        if (!peer.user().getName().equals(me)) {
            throw new Handshake.AuthError("expected a listener run by " + me + ", received one run by "
                + peer.user().getName());
        }
    }

    private static byte[][] handshake(SocketChannel ch, byte[] secret, String role, Identity expect, byte[] nonce)
            throws IOException {
        writeAll(ch, ByteBuffer.wrap(Handshake.hello(role, nonce, expect)));
        byte[] challenge = readExactly(ch, Handshake.CHALLENGE);
        byte[][] answer = Handshake.answer(secret, role, nonce, expect, challenge);
        writeAll(ch, ByteBuffer.wrap(answer[0]));
        byte[] ok = readExactly(ch, 1);
        if (ok[0] != Handshake.OK) {
            throw new Handshake.AuthError("the listener " + expect + " did not accept our proof");
        }
        return Handshake.keys(secret, answer[1]);
    }

    private static void writeAll(SocketChannel ch, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            ch.write(buf);
        }
    }

    private static byte[] readExactly(SocketChannel ch, int size) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(size);
        while (buf.hasRemaining()) {
            if (ch.read(buf) < 0) {
                throw new EOFException("connection closed");
            }
        }
        return buf.array();
    }

    /** Send whole frames: one record on a sealed link (split at MAX_RECORD), as they are otherwise. */
    public synchronized void send(List<byte[]> frames) throws IOException {
        if (frames.isEmpty()) {
            return;
        }
        long t0 = System.nanoTime();
        byte[][] chunks = frames.toArray(new byte[0][]);
        if (sealer == null) {
            ByteBuffer[] bufs = new ByteBuffer[chunks.length];
            for (int i = 0; i < chunks.length; i++) {
                bufs[i] = ByteBuffer.wrap(chunks[i]);
            }
            writeAll(bufs);
        } else {
            int from = 0;
            while (from < chunks.length) {
                int to = from;
                long size = 0;
                while (to < chunks.length && (to == from || size + chunks[to].length <= Sealing.MAX_RECORD)) {
                    size += chunks[to].length;
                    to++;
                }
                writeAll(sealer.seal(chunks, from, to));
                from = to;
            }
        }
        long spent = System.nanoTime() - t0;
        if (spent > 1_000_000) {
            blockedNanos += spent;
        }
    }

    private void writeAll(ByteBuffer[] bufs) throws IOException {
        int last = bufs.length - 1;
        while (bufs[last].hasRemaining()) {
            channel.write(bufs);
        }
    }

    private static final Batch WAKE = new Batch(new byte[0], new int[0], 0, null);

    /** End the task thread's wait for frames now (a component emitted from another thread). */
    public void wake() {
        inbound.offer(WAKE);
    }

    /** The next batch of frames, waiting at most `millis` (0: do not wait); null if none came. */
    public Batch poll(long millis) throws InterruptedException {
        return millis <= 0 ? inbound.poll() : inbound.poll(millis, TimeUnit.MILLISECONDS);
    }

    private void readLoop() {
        byte[] buf = new byte[READ_SIZE];
        int fill = 0;
        String lost;
        try {
            while (true) {
                if (fill == buf.length) {
                    buf = Arrays.copyOf(buf, buf.length * 2);
                }
                int n = channel.read(ByteBuffer.wrap(buf, fill, buf.length - fill));
                if (n < 0) {
                    lost = "the stream manager closed the connection";
                    break;
                }
                fill += n;
                int used = opener == null ? frames(buf, 0, fill) : records(buf, fill);
                if (used > 0) {
                    System.arraycopy(buf, used, buf, 0, fill - used);
                    fill -= used;
                }
                int need = needed(buf, fill);
                if (need > buf.length) {
                    buf = Arrays.copyOf(buf, need);
                }
            }
        } catch (BadInput e) {
            lost = e.getMessage();
        } catch (IOException e) {
            lost = closed ? "closed" : "the stream manager connection failed: " + e;
        } catch (InterruptedException e) {
            return;
        }
        try {
            inbound.put(new Batch(null, null, 0, lost));
        } catch (InterruptedException ignored) {
            // the task is going away anyway
        }
    }

    private int needed(byte[] buf, int fill) {
        if (fill < 4) {
            return 0;
        }
        long n = Frames.u32(buf, 0) & 0xffffffffL;
        return (int) Math.min(Integer.MAX_VALUE - 64, n + 4 + (opener == null ? 0 : Sealing.TAG));
    }

    /** Hand the whole frames of buf[from, fill) to the task; return where the first incomplete one starts. */
    private int frames(byte[] buf, int from, int fill) throws InterruptedException, BadInput {
        int pos = from;
        int count = 0;
        int[] offsets = new int[16];
        while (fill - pos >= Frames.HEADER_SIZE) {
            long length = Frames.u32(buf, pos) & 0xffffffffL;
            int kind = buf[pos + 4] & 0xff;
            if (length > Frames.MAX_FRAME || !Frames.knownKind(kind)) {
                throw new BadInput("the stream manager sent a malformed frame (kind " + kind + ", length " + length + ")");
            }
            if (pos + 4 + length > fill) {
                break;
            }
            if (2 * count + 2 > offsets.length) {
                offsets = Arrays.copyOf(offsets, offsets.length * 2);
            }
            offsets[2 * count] = pos - from;
            offsets[2 * count + 1] = (int) (pos - from + 4 + length);
            count++;
            pos += 4 + (int) length;
        }
        if (count > 0) {
            inbound.put(new Batch(Arrays.copyOfRange(buf, from, pos), offsets, count, null));
        }
        return pos;
    }

    private int records(byte[] buf, int fill) throws InterruptedException, BadInput {
        int pos = 0;
        while (fill - pos >= 4) {
            long n = Frames.u32(buf, pos) & 0xffffffffL;
            if (n < 1 || n > Sealing.MAX_RECORD) {
                throw new BadInput("the stream manager sent a record of " + n + " bytes; expected 1 to " + Sealing.MAX_RECORD);
            }
            int end = pos + 4 + (int) n + Sealing.TAG;
            if (end > fill) {
                break;
            }
            if (!opener.open(buf, pos + 4, (int) n, buf, pos + 4 + (int) n)) {
                throw new BadInput("a record from the stream manager failed its tag (forged, replayed or reordered)");
            }
            int used = frames(buf, pos + 4, pos + 4 + (int) n);
            if (used != pos + 4 + (int) n) {
                throw new BadInput("a record from the stream manager does not hold whole frames");
            }
            pos = end;
        }
        return pos;
    }

    private static final class BadInput extends IOException {
        BadInput(String message) {
            super(message);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
