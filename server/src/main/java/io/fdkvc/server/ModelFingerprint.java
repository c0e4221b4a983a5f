package io.fdkvc.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Identifies a model file for stored sessions: SHA-256 over its length and its first and last
 * MiB (header, metadata, and the tail of the tensor data), plus the model's config. Reading the
 * whole file would take seconds for a large model at every start; two weight files that agree on
 * all of this and differ only in the middle are not a case a session store needs to tell apart.
 */
public final class ModelFingerprint {
    private static final int SPAN = 1 << 20;

    private ModelFingerprint() {}

    public static String of(Path file, Object config) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            long size = ch.size();
            d.update(Long.toString(size).getBytes());
            d.update(String.valueOf(config).getBytes());
            read(ch, 0, (int) Math.min(SPAN, size), d);
            if (size > SPAN) read(ch, Math.max(SPAN, size - SPAN), (int) Math.min(SPAN, size - SPAN), d);
            return "sha256:" + HexFormat.of().formatHex(d.digest()).substring(0, 32) + ":" + file.getFileName();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void read(FileChannel ch, long at, int len, MessageDigest d) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        while (b.hasRemaining()) {
            if (ch.read(b, at + b.position()) < 0) break;
        }
        b.flip();
        d.update(b);
    }
}
