package heronbridge.jvm.task;

import heronbridge.jvm.wire.Frames;
import heronbridge.jvm.wire.Handshake;
import java.io.EOFException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * A stream manager's task socket for tests: a Unix socket that runs the listener's side of
 * the HBA2 handshake (with the secret it is given, right or wrong), then reads and writes
 * frames.
 */
final class FakeStreamManager implements AutoCloseable {
    final Path path;
    final ServerSocketChannel server;
    SocketChannel peer;
    /** The bytes the dialer sent before its proof was checked (or refused). */
    byte[] hello;
    boolean refusedProof;

    FakeStreamManager(Path dir) throws IOException {
        path = dir.resolve("stmgr-0.sock");
        Files.deleteIfExists(path);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(path));
    }

    /** Accept the task and run the handshake as `identity` with `secret`; false if the task's proof was wrong. */
    boolean accept(byte[] secret, byte[] identity) throws IOException {
        peer = server.accept();
        byte[] head = read(4 + 1);
        int roleLen = head[4] & 0xff;
        byte[] role = read(roleLen);
        byte[] nonceD = read(Handshake.NONCE);
        byte[] idLen = read(2);
        byte[] id = read((idLen[0] & 0xff) | (idLen[1] & 0xff) << 8);
        hello = id;
        byte[] nonceL = new byte[Handshake.NONCE];
        new SecureRandom().nextBytes(nonceL);
        byte[] t = Handshake.transcript(new String(role, StandardCharsets.UTF_8), identity, nonceD, nonceL);
        ByteBuffer challenge = ByteBuffer.allocate(Handshake.CHALLENGE);
        challenge.put(Handshake.MAGIC).put(nonceL).put(Handshake.proof(secret, "listener", t)).flip();
        write(challenge.array());
        byte[] proofD;
        try {
            proofD = read(Handshake.MAC);
        } catch (EOFException e) {
            refusedProof = true;  // the task refused our proof and hung up
            return false;
        }
        if (!MessageDigest.isEqual(proofD, Handshake.proof(secret, "dialer", t))) {
            peer.close();
            return false;
        }
        write(new byte[] {Handshake.OK});
        return true;
    }

    byte[] read(int n) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(n);
        while (buf.hasRemaining()) {
            if (peer.read(buf) < 0) {
                throw new EOFException("the task closed its connection");
            }
        }
        return buf.array();
    }

    /** The next whole frame the task sent. */
    byte[] frame() throws IOException {
        byte[] len = read(4);
        byte[] rest = read(Frames.u32(len, 0));
        byte[] all = Arrays.copyOf(len, 4 + rest.length);
        System.arraycopy(rest, 0, all, 4, rest.length);
        return all;
    }

    /** The next frame of `kind`, skipping others (metrics and the like). */
    byte[] frame(int kind) throws IOException {
        while (true) {
            byte[] f = frame();
            if (Frames.kind(f, 0) == kind) {
                return f;
            }
        }
    }

    void write(byte[]... frames) throws IOException {
        for (byte[] f : frames) {
            ByteBuffer b = ByteBuffer.wrap(f);
            while (b.hasRemaining()) {
                peer.write(b);
            }
        }
    }

    @Override
    public void close() throws IOException {
        if (peer != null) {
            peer.close();
        }
        server.close();
        Files.deleteIfExists(path);
    }
}
