package io.fdkvc.engine.tokenizer;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Turns token ids into text incrementally, as a chat loop prints them. A token may end in the
 * middle of a UTF-8 character (byte tokens, or byte-level BPE pieces of an emoji); those bytes are
 * held until the character is complete, so every returned string is valid text and the
 * concatenation of all returned strings plus {@link #flush()} equals {@link Tokenizer#decode} of
 * the same ids (for a decoder made with {@code startOfText = true}).
 *
 * <p>Control, unknown and unused tokens produce no text, unless the decoder renders special
 * tokens ({@link Tokenizer#decoder(boolean, boolean)}): then control and unknown tokens show their
 * strings, as llama.cpp prints them with {@code special = true}. Bytes that can never complete a
 * character become U+FFFD (llama.cpp writes them raw; a UTF-8 terminal shows the same).
 *
 * <p>SentencePiece dummy prefix: the space that encoding put in front of the text is dropped from
 * the first token of the text and from any token directly after a special token (BOS included),
 * which covers run.c's rule ("following BOS, strip the leading space").
 *
 * <p>Allocation: after construction a decoder allocates only the strings it returns; the
 * {@link #next(int, StringBuilder)} form appends to the caller's builder and allocates nothing.
 * Not thread-safe: one decoder per stream.
 */
public final class TokenDecoder {
    private final byte[][] tokenBytes;
    private final boolean[] dummySpace;
    private final boolean[] special;
    /** By id, the text a control or unknown token shows instead of nothing; null: none shown. */
    private final byte[][] specialText;
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);

    private byte[] pending = new byte[64];
    private int pendingLength;
    private ByteBuffer in = ByteBuffer.wrap(pending);
    private CharBuffer out = CharBuffer.allocate(64);
    private boolean atStart;
    private int previous = -1;

    TokenDecoder(byte[][] tokenBytes, boolean[] dummySpace, boolean[] special, byte[][] specialText, boolean startOfText) {
        this.tokenBytes = tokenBytes;
        this.specialText = specialText;
        this.dummySpace = dummySpace;
        this.special = special;
        this.atStart = startOfText;
    }

    /** The text completed by this token; "" when it completed nothing. */
    public String next(int id) {
        int before = pendingLength;
        append(id);
        if (pendingLength == before && before == 0) {
            return "";
        }
        StringBuilder sb = new StringBuilder(pendingLength);
        emitComplete(sb);
        return sb.toString();
    }

    /** Appends the text completed by this token to {@code sb}. */
    public void next(int id, StringBuilder sb) {
        append(id);
        emitComplete(sb);
    }

    /** Text of the bytes still held (an unfinished character becomes U+FFFD); empties the buffer. */
    public String flush() {
        StringBuilder sb = new StringBuilder();
        flush(sb);
        return sb.toString();
    }

    public void flush(StringBuilder sb) {
        decode(pendingLength, sb);
    }

    /** Whether bytes of an unfinished character are held. */
    public boolean hasPending() {
        return pendingLength > 0;
    }

    /** Forgets held bytes and history, as if new. */
    public void reset(boolean startOfText) {
        pendingLength = 0;
        previous = -1;
        atStart = startOfText;
    }

    private void append(int id) {
        if (id < 0 || id >= tokenBytes.length) {
            throw new IllegalArgumentException("token id " + id + " outside the vocabulary of " + tokenBytes.length);
        }
        byte[] bytes = specialText != null && specialText[id] != null ? specialText[id] : tokenBytes[id];
        int skip = dummySpace[id] && (atStart || (previous >= 0 && special[previous])) ? 1 : 0;
        atStart = false;
        previous = id;
        int n = bytes.length - skip;
        if (pendingLength + n > pending.length) {
            pending = Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLength + n));
            in = ByteBuffer.wrap(pending);
        }
        System.arraycopy(bytes, skip, pending, pendingLength, n);
        pendingLength += n;
    }

    /** Decodes the held bytes up to the start of a trailing unfinished UTF-8 sequence. */
    private void emitComplete(StringBuilder sb) {
        decode(completeLength(pending, pendingLength), sb);
    }

    /**
     * Length of the prefix that holds no unfinished trailing sequence: looks back at most three
     * bytes for a lead byte whose sequence needs more bytes than follow it. Anything else (ASCII,
     * complete or malformed sequences) is decoded now.
     */
    static int completeLength(byte[] b, int length) {
        for (int i = length - 1; i >= Math.max(0, length - 3); i--) {
            int v = b[i] & 0xFF;
            if (v < 0x80) {
                return length;
            }
            if (v >= 0xC0) {
                int need = v >= 0xF8 ? 1 : v >= 0xF0 ? 4 : v >= 0xE0 ? 3 : 2;
                return length - i < need ? i : length;
            }
        }
        return length;
    }

    /**
     * Appends the text of the first {@code n} held bytes and drops them. Well-formed UTF-8 (the
     * usual case) is decoded inline; from the first malformed byte on, the JDK's decoder takes
     * over so that replacement follows its rules. The inline path exists because a
     * {@code CharsetDecoder} round trip per token costs several hundred nanoseconds.
     */
    private void decode(int n, StringBuilder sb) {
        if (n == 0) {
            return;
        }
        byte[] b = pending;
        int i = 0;
        while (i < n) {
            int b0 = b[i] & 0xFF;
            if (b0 < 0x80) {
                sb.append((char) b0);
                i++;
                continue;
            }
            int len = wellFormedLength(b, i, n);
            if (len == 0) {
                decodeWithReplacement(i, n, sb);
                break;
            }
            int cp = switch (len) {
                case 2 -> (b0 & 0x1F) << 6 | (b[i + 1] & 0x3F);
                case 3 -> (b0 & 0x0F) << 12 | (b[i + 1] & 0x3F) << 6 | (b[i + 2] & 0x3F);
                default -> (b0 & 0x07) << 18 | (b[i + 1] & 0x3F) << 12 | (b[i + 2] & 0x3F) << 6 | (b[i + 3] & 0x3F);
            };
            sb.appendCodePoint(cp);
            i += len;
        }
        System.arraycopy(pending, n, pending, 0, pendingLength - n);
        pendingLength -= n;
    }

    /** Length of the well-formed multi-byte sequence at {@code i} (Unicode Table 3-7), or 0. */
    private static int wellFormedLength(byte[] b, int i, int n) {
        int b0 = b[i] & 0xFF;
        int len;
        int lo = 0x80;
        int hi = 0xBF;
        if (b0 >= 0xC2 && b0 <= 0xDF) {
            len = 2;
        } else if (b0 >= 0xE0 && b0 <= 0xEF) {
            len = 3;
            if (b0 == 0xE0) {
                lo = 0xA0;
            } else if (b0 == 0xED) {
                hi = 0x9F;
            }
        } else if (b0 >= 0xF0 && b0 <= 0xF4) {
            len = 4;
            if (b0 == 0xF0) {
                lo = 0x90;
            } else if (b0 == 0xF4) {
                hi = 0x8F;
            }
        } else {
            return 0;
        }
        if (i + len > n) {
            return 0;
        }
        int b1 = b[i + 1] & 0xFF;
        if (b1 < lo || b1 > hi) {
            return 0;
        }
        for (int k = 2; k < len; k++) {
            int c = b[i + k] & 0xFF;
            if (c < 0x80 || c > 0xBF) {
                return 0;
            }
        }
        return len;
    }

    private void decodeWithReplacement(int from, int to, StringBuilder sb) {
        int n = to - from;
        if (out.capacity() < n) {
            out = CharBuffer.allocate(Math.max(n, out.capacity() * 2));
        }
        in.clear().position(from).limit(to);
        out.clear();
        utf8.reset();
        utf8.decode(in, out, true);
        utf8.flush(out);
        out.flip();
        sb.append(out);
    }
}
