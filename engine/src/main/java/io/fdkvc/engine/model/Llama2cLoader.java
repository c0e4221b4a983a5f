package io.fdkvc.engine.model;

import io.fdkvc.core.Limits;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.tensor.F32Tensor;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tokenizer.Vocabulary;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Reads llama2.c's legacy checkpoints ({@code run.c}'s format) and its tokenizer files.
 *
 * <p>Checkpoint: seven little-endian int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 * vocab_size, seq_len; a negative vocab_size means the classifier is not shared with the token
 * embedding), then float32 arrays: token embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3,
 * rms_final, freq_cis_real, freq_cis_imag (unused: RoPE is recomputed), and wcls when unshared.
 * Every size is checked against the file's length before anything is allocated.
 *
 * <p>Tokenizer: int32 max_token_length, then per token float32 score, int32 length, bytes. Its
 * strings are turned into the SentencePiece spelling the GGUF files use (space as U+2581,
 * {@code <s>} and {@code </s>} without llama2.c's surrounding newlines), so the same tokenizer
 * serves both formats. Model "llama", BOS 1, EOS 2.
 */
public final class Llama2cLoader {
    private static final int HEADER_BYTES = 7 * 4;

    private Llama2cLoader() {}

    /** The model and its tokenizer, weights in Java arrays (no resource to close). */
    public static LoadedModel load(Path model, Path tokenizer) {
        // the 28-byte header first: it says how long the file must be, and nothing else is read
        // (or allocated) until the file's size agrees
        ByteBuffer header = readHeader(model);
        ByteBuffer buf = readAll(model, "model", expectedSize(header, model));
        Parsed p = parse(buf, model);
        Vocabulary vocab = readTokenizer(tokenizer, p.config.vocabSize());
        return new LoadedModel(p.config, p.weights, vocab, null);
    }

    private record Parsed(LlamaConfig config, LlamaWeights weights) {}

    private static ByteBuffer readHeader(Path file) {
        if (Files.isDirectory(file)) throw new ModelFormatException(file + ": is a directory, not a model file");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            while (b.hasRemaining() && ch.read(b) >= 0) {
                // read until the header is complete or the file ends
            }
            b.flip();
            if (b.remaining() < HEADER_BYTES) {
                throw new ModelFormatException(file + ": " + b.remaining() + " bytes, too short for a llama2.c header (28 bytes)");
            }
            return b;
        } catch (NoSuchFileException e) {
            throw new ModelFormatException(file + ": no such model file");
        } catch (IOException e) {
            throw new ModelFormatException(file + ": cannot read model file: " + e.getMessage(), e);
        }
    }

    /** The file size the header implies; checks every field first (see {@link #parse}). */
    private static long expectedSize(ByteBuffer header, Path file) {
        return HEADER_BYTES + 4 * checkedHeader(header.duplicate().order(ByteOrder.LITTLE_ENDIAN), file).floats;
    }

    private static ByteBuffer readAll(Path file, String what) {
        return readAll(file, what, -1);
    }

    /** The whole file; {@code expected >= 0}: refused unless the file has exactly that many bytes. */
    private static ByteBuffer readAll(Path file, String what, long expected) {
        if (Files.isDirectory(file)) throw new ModelFormatException(file + ": is a directory, not a " + what + " file");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (expected >= 0 && size != expected) {
                throw new ModelFormatException(file + ": the llama2.c header implies " + expected + " bytes, the file has " + size);
            }
            if (size > Integer.MAX_VALUE - 8) {
                throw new ModelFormatException(file + ": " + what + " file of " + size + " bytes is too large for a llama2.c checkpoint (2 GiB at most)");
            }
            // the bytes and, for a model, the float copy of them
            Limits.checkMemory(file + ": a " + what + " file of " + size + " bytes", expected >= 0 ? 2.0 * size : size);
            ByteBuffer b = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) throw new ModelFormatException(file + ": file shrank while reading");
            }
            return b.flip();
        } catch (NoSuchFileException e) {
            throw new ModelFormatException(file + ": no such " + what + " file");
        } catch (IOException e) {
            throw new ModelFormatException(file + ": cannot read " + what + " file: " + e.getMessage(), e);
        }
    }

    /** The header's fields, each checked, and the number of floats they imply. */
    private record Header(int dim, int hidden, int layers, int heads, int kvHeads, int vocabField, int seqLen, long floats) {}

    private static Header checkedHeader(ByteBuffer b, Path file) {
        if (b.remaining() < HEADER_BYTES) {
            throw new ModelFormatException(file + ": " + b.remaining() + " bytes, too short for a llama2.c header (28 bytes)");
        }
        int dim = b.getInt(), hidden = b.getInt(), layers = b.getInt(), heads = b.getInt(), kvHeads = b.getInt();
        int vocabField = b.getInt(), seqLen = b.getInt();
        boolean shared = vocabField > 0;
        int vocab = Math.abs(vocabField);
        positive(file, "dim", dim);
        positive(file, "hidden_dim", hidden);
        positive(file, "n_layers", layers);
        positive(file, "n_heads", heads);
        positive(file, "n_kv_heads", kvHeads);
        if (vocabField == 0 || vocabField == Integer.MIN_VALUE) throw new ModelFormatException(file + ": header field vocab_size is " + vocabField);
        positive(file, "seq_len", seqLen);
        if (dim % heads != 0) throw new ModelFormatException(file + ": dim " + dim + " is not a multiple of n_heads " + heads);
        if (heads % kvHeads != 0) throw new ModelFormatException(file + ": n_heads " + heads + " is not a multiple of n_kv_heads " + kvHeads);
        int headDim = dim / heads;
        if (headDim % 2 != 0) throw new ModelFormatException(file + ": head size " + headDim + " is odd (RoPE needs pairs)");
        long kvDim = (long) kvHeads * headDim;
        // the count first in doubles (three int factors overflow even a long), then exactly once it is small
        double l = layers, d = dim, h = hidden, v = vocab;
        double approx = v * d + l * d + l * d * d + 2 * l * d * kvDim + l * d * d + l * d + 3 * l * d * h + d
                + 2.0 * seqLen * (headDim / 2) + (shared ? 0 : v * d);
        long L = layers, D = dim, H = hidden, V = vocab;
        long floats = approx > Integer.MAX_VALUE ? Long.MAX_VALUE : V * D + L * D + L * D * D + 2 * L * D * kvDim + L * D * D + L * D
                + 3 * L * D * H + D + 2L * seqLen * (headDim / 2) + (shared ? 0 : V * D);
        if (floats > Integer.MAX_VALUE - 8) throw new ModelFormatException(file + ": the header (dim " + dim + ", hidden_dim " + hidden
                + ", n_layers " + layers + ", n_heads " + heads + ", n_kv_heads " + kvHeads + ", vocab_size " + vocabField + ", seq_len "
                + seqLen + ") implies " + String.format(java.util.Locale.ROOT, "%.4g", approx) + " weights, more than a Java array holds");
        return new Header(dim, hidden, layers, heads, kvHeads, vocabField, seqLen, floats);
    }

    private static Parsed parse(ByteBuffer b, Path file) {
        Header hd = checkedHeader(b, file);
        int dim = hd.dim(), hidden = hd.hidden(), layers = hd.layers(), heads = hd.heads(), kvHeads = hd.kvHeads();
        int vocabField = hd.vocabField(), seqLen = hd.seqLen();
        boolean shared = vocabField > 0;
        int vocab = Math.abs(vocabField);
        int headDim = dim / heads;
        long kvDim = (long) kvHeads * headDim;
        long floats = hd.floats();
        long expected = HEADER_BYTES + 4 * floats;
        if (expected != b.limit()) {
            throw new ModelFormatException(file + ": the header (dim " + dim + ", hidden_dim " + hidden + ", n_layers " + layers
                    + ", n_heads " + heads + ", n_kv_heads " + kvHeads + ", vocab_size " + vocabField + ", seq_len " + seqLen
                    + ") implies " + expected + " bytes, the file has " + b.limit());
        }
        float[] all = new float[(int) floats];
        b.asFloatBuffer().get(all);
        io.fdkvc.engine.gguf.FiniteCheck.check(all, file.toString()); // NaN/Inf weights: refused
        int kd = (int) kvDim;
        int[] at = {0};
        FloatTensor emb = matrix(all, at, vocab, dim);
        float[][] rmsAtt = vectors(all, at, layers, dim);
        FloatTensor[] wq = matrices(all, at, layers, dim, dim);
        FloatTensor[] wk = matrices(all, at, layers, kd, dim);
        FloatTensor[] wv = matrices(all, at, layers, kd, dim);
        FloatTensor[] wo = matrices(all, at, layers, dim, dim);
        float[][] rmsFfn = vectors(all, at, layers, dim);
        FloatTensor[] w1 = matrices(all, at, layers, hidden, dim);
        FloatTensor[] w2 = matrices(all, at, layers, dim, hidden);
        FloatTensor[] w3 = matrices(all, at, layers, hidden, dim);
        float[] rmsFinal = vectors(all, at, 1, dim)[0];
        at[0] += 2 * seqLen * (headDim / 2); // freq_cis_real, freq_cis_imag: legacy, RoPE is recomputed
        FloatTensor cls = shared ? emb : matrix(all, at, vocab, dim);
        LlamaConfig config = new LlamaConfig("llama", dim, hidden, layers, heads, kvHeads, headDim, vocab, seqLen,
                1e-5f, 10000f, "none", 1f, 0, false, shared);
        LlamaWeights weights = new LlamaWeights(emb, rmsAtt, wq, wk, wv, wo, null, null, null, rmsFfn, w1, w2, w3,
                rmsFinal, cls);
        return new Parsed(config, weights);
    }

    private static void positive(Path file, String field, int v) {
        if (v <= 0) throw new ModelFormatException(file + ": header field " + field + " is " + v + ", must be positive");
    }

    private static FloatTensor matrix(float[] all, int[] at, int rows, int cols) {
        F32Tensor t = new F32Tensor(all, at[0], rows, cols);
        at[0] += rows * cols;
        return t;
    }

    private static FloatTensor[] matrices(float[] all, int[] at, int n, int rows, int cols) {
        FloatTensor[] m = new FloatTensor[n];
        for (int i = 0; i < n; i++) m[i] = matrix(all, at, rows, cols);
        return m;
    }

    private static float[][] vectors(float[] all, int[] at, int n, int len) {
        float[][] v = new float[n][];
        for (int i = 0; i < n; i++) {
            v[i] = Arrays.copyOfRange(all, at[0], at[0] + len);
            at[0] += len;
        }
        return v;
    }

    /** Reads a llama2.c tokenizer file holding {@code vocabSize} tokens. */
    public static Vocabulary readTokenizer(Path file, int vocabSize) {
        if (file == null) throw new ModelFormatException("a llama2.c model needs its tokenizer file, and none was given");
        ByteBuffer b = readAll(file, "tokenizer");
        if (b.remaining() < 4) throw new ModelFormatException(file + ": too short for a llama2.c tokenizer");
        int maxLen = b.getInt();
        if (maxLen <= 0) throw new ModelFormatException(file + ": max_token_length is " + maxLen);
        String[] tokens = new String[vocabSize];
        float[] scores = new float[vocabSize];
        int[] types = new int[vocabSize];
        var utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        for (int i = 0; i < vocabSize; i++) {
            if (b.remaining() < 8) {
                throw new ModelFormatException(file + ": ends after " + i + " tokens, the model has " + vocabSize);
            }
            scores[i] = b.getFloat();
            int len = b.getInt();
            if (len < 0 || len > maxLen || len > b.remaining()) {
                throw new ModelFormatException(file + ": token " + i + " has length " + len + " (max_token_length " + maxLen
                        + ", " + b.remaining() + " bytes left)");
            }
            ByteBuffer piece = b.slice(b.position(), len);
            b.position(b.position() + len);
            String s;
            try {
                s = utf8.decode(piece).toString();
            } catch (CharacterCodingException e) {
                throw new ModelFormatException(file + ": token " + i + " is not UTF-8");
            }
            tokens[i] = spell(i, s);
            types[i] = type(i, tokens[i]);
        }
        if (b.hasRemaining()) {
            throw new ModelFormatException(file + ": " + b.remaining() + " bytes after the " + vocabSize
                    + " tokens the model has (tokenizer of another model?)");
        }
        return new Vocabulary("llama", null, tokens, scores, types, null, 1, 2, null);
    }

    /** llama2.c spells SentencePiece's U+2581 as a space and wraps BOS/EOS in newlines. */
    private static String spell(int id, String s) {
        if ((id == 1 || id == 2) && (s.strip().equals("<s>") || s.strip().equals("</s>"))) return s.strip();
        return s.replace(' ', '\u2581');
    }

    private static int type(int id, String s) {
        if (id == 0 && s.equals("<unk>")) return 2;
        if (id == 1 || id == 2) return 3;
        if (s.length() == 6 && s.startsWith("<0x") && s.endsWith(">")) return 6;
        return 1;
    }
}
