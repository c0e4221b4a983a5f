package io.fdkvc.engine.modelwriter;

import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Quantizer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The small files of the side-by-side with llama.cpp: per architecture, a shape with the real
 * model's structure (head dimension other than dim / heads where the real one has it, the
 * sliding-window pattern, partial rotary, YaRN / LongRoPE, no-RoPE layers) and small widths, with
 * random weights of a seed, in the three {@link Form}s. The files are not kept: {@link #write} makes the
 * same bytes from the same arguments, for llama.cpp ({@code bench/llamacpp/greedy-goldens.sh}
 * runs {@link #main}) and for the test that compares the engine's greedy ids with llama.cpp's
 * ({@code LlamaCppGreedyTest}).
 */
public final class LlamaCppChecks {
    private LlamaCppChecks() {}

    /**
     * One architecture's check.
     *
     * @param contexts the context sizes llama.cpp runs it with (multiples of 256, as llama.cpp pads
     *                 them; Phi-3 picks LongRoPE's short factors up to the original context, the long
     *                 ones beyond)
     */
    public record Check(String name, ModelShape shape, int... contexts) {}

    private static final int VOCAB = 320;

    /** Every check, in the order of the golden files. */
    public static final List<Check> ALL = List.of(
            new Check("llama", new ModelShape(new Layout.Llama(), 64, 128, 2, 4, 2, 16, VOCAB, 4096, 1e-5f, 10000f, true), 512),
            new Check("qwen3", new ModelShape(new Layout.Qwen3(), 64, 128, 2, 4, 2, 32, VOCAB, 4096, 1e-6f, 1_000_000f, false), 512),
            // seven layers: 0-4 and 6 slide over a window of 8 (five of every six, llama.cpp's default), 5 is global
            new Check("gemma3", new ModelShape(new Layout.Gemma3(8, 10000f), 64, 128, 7, 4, 1, 32, VOCAB, 4096, 1e-6f, 1_000_000f,
                    true), 512),
            // RoPE over 12 of 16 dimensions (0.75, as Phi-4-mini); LongRoPE from 256 to 4096 positions: llama.cpp
            // (which rounds its context up to a multiple of 256) takes the short factors at 256, the long ones at 512
            new Check("phi3", new ModelShape(new Layout.Phi3(12, 256, new float[] {1f, 1.5f, 2.5f, 4f, 6f, 9f},
                    new float[] {1f, 1.02f, 1.05f, 1.1f, 1.2f, 1.3f}, 262144), 64, 128, 2, 4, 2, 16, VOCAB, 4096, 1e-5f, 10000f, true),
                    256, 512),
            // head dimension 32 for width 64 / 4 heads (as Ministral 3: 128 for 3072 / 32); YaRN x16 from 16 positions,
            // so the attention temperature grows from position 16 on
            new Check("mistral3", new ModelShape(new Layout.Mistral3(16f, 16, 32f, 1f, 1f, 0.1f), 64, 128, 2, 4, 2, 32, VOCAB, 256,
                    1e-5f, 1_000_000f, true), 256),
            // four layers: the fourth has no RoPE
            new Check("smollm3", new ModelShape(new Layout.SmolLM3(), 64, 128, 4, 4, 2, 16, VOCAB, 4096, 1e-6f, 5_000_000f, true), 512));

    /**
     * The forms a check's weights are given to llama.cpp in, each with the type of the file the
     * engine reads for it.
     */
    public enum Form {
        /** F32 weights, for both engines. */
        F32(GgmlType.F32),
        /** Q8_0 weights (llama.cpp's most common 8-bit type), for both engines. */
        Q8_0(GgmlType.Q8_0),
        /**
         * The Q8_0 file's values (every weight rounded as Q8_0 stores it) written in F32 for
         * llama.cpp, the Q8_0 file for the engine: the same weights, but llama.cpp then multiplies
         * them with F32 activations, where for a Q8_0 file it rounds each activation row to 8 bits
         * too (its Q8_0 dot product). The engine keeps activations in F32 for every weight type, so
         * this form compares its Q8_0 arithmetic without that rounding, to F32's precision.
         */
        Q8_0_VALUES_IN_F32(GgmlType.Q8_0);

        /** The type of the file the engine reads. */
        public final GgmlType engineType;

        Form(GgmlType engineType) {
            this.engineType = engineType;
        }
    }

    /** The weight seeds. */
    public static final long[] SEEDS = {1, 2, 3};

    /** Greedy tokens generated after the prompt. */
    public static final int TOKENS = 32;

    /** The prompt, the same for every file: five ids spread over the vocabulary. */
    public static final int[] PROMPT = {10, 75, 140, 205, 270};

    public static Check check(String name) {
        for (Check c : ALL) if (c.name().equals(name)) return c;
        throw new IllegalArgumentException("no check " + name);
    }

    /** Writes the check's model with weights of {@code seed} in {@code type} to {@code file}. */
    public static void write(Check c, GgmlType type, long seed, Path file) {
        GgufModelWriter.writer(c.shape(), VocabularySpec.sentencePiecePlaceholders(VOCAB), Weights.random(seed), TensorTypes.uniform(type))
                // not the architecture's name: llama.cpp looks up Phi-3's special tokens in a file named "phi3"
                .putString("general.name", "fdkvc llama.cpp check")
                .write(file);
    }

    /** Writes the check's model with weights of {@code seed} in the form llama.cpp reads for {@code form}. */
    public static void write(Check c, Form form, long seed, Path file) {
        if (form != Form.Q8_0_VALUES_IN_F32) {
            write(c, form.engineType, seed, file);
            return;
        }
        GgufModelWriter.writer(c.shape(), VocabularySpec.sentencePiecePlaceholders(VOCAB), roundedAsQ8_0(Weights.random(seed)),
                        TensorTypes.uniform(GgmlType.F32))
                .putString("general.name", "fdkvc llama.cpp check")
                .write(file);
    }

    /**
     * {@code source} with every matrix value replaced by what Q8_0 stores for it (blocks of 32
     * values sharing one F16 scale, each value a signed byte times the scale): the values the Q8_0
     * file written by {@link TensorTypes#uniform} holds. Every matrix of a check has whole blocks.
     */
    static Weights roundedAsQ8_0(Weights source) {
        int block = GgmlType.Q8_0.blockSize, bytes = GgmlType.Q8_0.blockBytes;
        return (t, firstRow, count, into) -> {
            source.fill(t, firstRow, count, into);
            if (!t.role().matrix()) return;
            int n = (int) (count * t.cols());
            byte[] q = Quantizer.quantize(GgmlType.Q8_0, into, 0, n);
            for (int b = 0; b < n / block; b++) {
                float scale = Float.float16ToFloat((short) ((q[b * bytes] & 0xff) | (q[b * bytes + 1] << 8)));
                for (int i = 0; i < block; i++) into[b * block + i] = q[b * bytes + 2 + i] * scale;
            }
        };
    }

    /** The file name of a check's model. */
    public static String fileName(Check c, GgmlType type, long seed) {
        return c.name() + "-" + type.name().toLowerCase(java.util.Locale.ROOT) + "-s" + seed + ".gguf";
    }

    /**
     * {@code DIR}: writes every check's files into DIR and prints one line per llama.cpp run:
     * {@code NAME FORM SEED CONTEXT FILE PROMPT...}.
     */
    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        StringBuilder prompt = new StringBuilder();
        for (int id : PROMPT) prompt.append(' ').append(id);
        for (Check c : ALL)
            for (Form t : Form.values())
                for (long seed : SEEDS) {
                    Path f = dir.resolve(c.name() + "-" + t.name().toLowerCase(java.util.Locale.ROOT) + "-s" + seed + ".gguf");
                    write(c, t, seed, f);
                    for (int ctx : c.contexts()) System.out.println(c.name() + " " + t + " " + seed + " " + ctx + " " + f + prompt);
                }
    }
}
