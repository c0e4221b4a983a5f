package io.fdkvc.engine.tensor;

import java.util.Random;

/**
 * A scalar decoder for the GGML block layouts, written from the format description
 * independently of the vectorised tensor views, plus random well-formed blocks. Every value is
 * computed in the order ggml's reference decoder uses, so results match the views exactly.
 */
final class Reference {
    private Reference() {}

    static int u8(byte[] b, int i) {
        return b[i] & 0xFF;
    }

    static float half(byte[] b, int i) {
        return Float.float16ToFloat((short) (u8(b, i) | u8(b, i + 1) << 8));
    }

    /** Decodes {@code n} values of {@code type} starting at byte {@code off}. */
    static float[] decode(GgmlType type, byte[] b, int off, int n) {
        float[] y = new float[n];
        int nb = n / type.blockSize;
        for (int blk = 0; blk < nb; blk++) {
            int p = off + blk * type.blockBytes, e = blk * type.blockSize;
            switch (type) {
                case F32 -> y[e] = Float.intBitsToFloat(u8(b, p) | u8(b, p + 1) << 8 | u8(b, p + 2) << 16 | u8(b, p + 3) << 24);
                case F16 -> y[e] = half(b, p);
                case BF16 -> y[e] = Float.intBitsToFloat((u8(b, p) | u8(b, p + 1) << 8) << 16);
                case Q8_0 -> {
                    float d = half(b, p);
                    for (int i = 0; i < 32; i++) y[e + i] = b[p + 2 + i] * d;
                }
                case Q4_0 -> {
                    float d = half(b, p);
                    for (int j = 0; j < 16; j++) {
                        y[e + j] = ((u8(b, p + 2 + j) & 0xF) - 8) * d;
                        y[e + j + 16] = ((u8(b, p + 2 + j) >> 4) - 8) * d;
                    }
                }
                case Q4_K -> {
                    float d = half(b, p), dmin = half(b, p + 2);
                    int[] sc = new int[8], m = new int[8];
                    for (int j = 0; j < 8; j++) {
                        int[] sm = scaleMinK4(b, p + 4, j);
                        sc[j] = sm[0];
                        m[j] = sm[1];
                    }
                    for (int i = 0; i < 256; i++) {
                        int chunk = i / 64, within = i % 64, j = i / 32;
                        int byt = u8(b, p + 16 + 32 * chunk + within % 32);
                        int q = within < 32 ? byt & 0xF : byt >> 4;
                        float d1 = d * sc[j], m1 = dmin * m[j];
                        y[e + i] = d1 * q - m1;
                    }
                }
                case Q4_1 -> {
                    float d = half(b, p), m = half(b, p + 2);
                    for (int i = 0; i < 32; i++) {
                        int byt = u8(b, p + 4 + i % 16);
                        int q = i < 16 ? byt & 0xF : byt >> 4;
                        y[e + i] = q * d + m;
                    }
                }
                case Q5_0, Q5_1 -> {
                    boolean hasMin = type == GgmlType.Q5_1;
                    float d = half(b, p), m = hasMin ? half(b, p + 2) : 0;
                    int hp = hasMin ? p + 4 : p + 2;
                    long qh = u8(b, hp) | u8(b, hp + 1) << 8 | u8(b, hp + 2) << 16 | (long) u8(b, hp + 3) << 24;
                    for (int i = 0; i < 32; i++) {
                        int byt = u8(b, hp + 4 + i % 16);
                        int q = (i < 16 ? byt & 0xF : byt >> 4) + 16 * (int) ((qh >> i) & 1);
                        y[e + i] = hasMin ? q * d + m : (q - 16) * d;
                    }
                }
                case Q2_K -> {
                    float d = half(b, p + 80), dmin = half(b, p + 82);
                    for (int i = 0; i < 256; i++) {
                        int half = i / 128, j = (i % 128) / 32, w = i % 32;
                        int q = (u8(b, p + 16 + 32 * half + w) >> (2 * j)) & 3;
                        int sc = u8(b, p + i / 16);
                        y[e + i] = (d * (sc & 0xF)) * q - dmin * (sc >> 4);
                    }
                }
                case Q3_K -> {
                    float d = half(b, p + 108);
                    // unpack the sixteen 6-bit scales as four 32-bit words, the way the format packs them
                    int[] sc = new int[16];
                    for (int k = 0; k < 4; k++) {
                        int a = u8(b, p + 96 + k), c = u8(b, p + 100 + k), t = u8(b, p + 104 + k);
                        sc[k] = (a & 0xF) | (t & 3) << 4;
                        sc[4 + k] = (c & 0xF) | ((t >> 2) & 3) << 4;
                        sc[8 + k] = (a >> 4) | ((t >> 4) & 3) << 4;
                        sc[12 + k] = (c >> 4) | ((t >> 6) & 3) << 4;
                    }
                    for (int i = 0; i < 256; i++) {
                        int half = i / 128, j = (i % 128) / 32, w = i % 32;
                        int q = (u8(b, p + 32 + 32 * half + w) >> (2 * j)) & 3;
                        boolean high = (u8(b, p + w) & (1 << (4 * half + j))) != 0;
                        y[e + i] = (d * (sc[i / 16] - 32)) * (high ? q : q - 4);
                    }
                }
                case Q5_K -> {
                    float d = half(b, p), dmin = half(b, p + 2);
                    for (int i = 0; i < 256; i++) {
                        int chunk = i / 64, within = i % 64, l = within % 32;
                        int byt = u8(b, p + 48 + 32 * chunk + l);
                        int bit = within < 32 ? 2 * chunk : 2 * chunk + 1;
                        int q = (within < 32 ? byt & 0xF : byt >> 4) + (((u8(b, p + 16 + l) >> bit) & 1) << 4);
                        int[] sm = scaleMinK4(b, p + 4, i / 32);
                        y[e + i] = d * sm[0] * q - dmin * sm[1];
                    }
                }
                case IQ4_NL -> {
                    float d = half(b, p);
                    for (int i = 0; i < 32; i++) {
                        int byt = u8(b, p + 2 + i % 16);
                        y[e + i] = d * IQ4[i < 16 ? byt & 0xF : byt >> 4];
                    }
                }
                case IQ4_XS -> {
                    float d = half(b, p);
                    int high = u8(b, p + 2) | u8(b, p + 3) << 8;
                    for (int i = 0; i < 256; i++) {
                        int sub = i / 32, w = i % 32;
                        int ls = ((u8(b, p + 4 + sub / 2) >> (sub % 2 == 0 ? 0 : 4)) & 0xF) | ((high >> (2 * sub)) & 3) << 4;
                        int byt = u8(b, p + 8 + 16 * sub + w % 16);
                        y[e + i] = (d * (ls - 32)) * IQ4[w < 16 ? byt & 0xF : byt >> 4];
                    }
                }
                case Q6_K -> {
                    float d = half(b, p + 208);
                    for (int i = 0; i < 256; i++) {
                        int half = i / 128, r = i % 128, quarter = r / 32, l = r % 32;
                        int ql = u8(b, p + 64 * half + l + (quarter % 2 == 1 ? 32 : 0));
                        int low = quarter < 2 ? ql & 0xF : ql >> 4;
                        int high = (u8(b, p + 128 + 32 * half + l) >> (2 * quarter)) & 3;
                        int q = (low | high << 4) - 32;
                        int sc = b[p + 192 + i / 16];
                        y[e + i] = d * sc * q;
                    }
                }
            }
        }
        return y;
    }

    /** The IQ4 non-linear levels, as published in ggml-common.h. */
    static final int[] IQ4 = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

    /**
     * The 6-bit scale and min of sub-block j from the 12 packed bytes: j < 4 in the low 6 bits
     * of bytes j and j+4; j >= 4 in the nibbles of byte j+4 with the top two bits of bytes j-4
     * (scale) and j (min) as their bits 4-5.
     */
    static int[] scaleMinK4(byte[] b, int s, int j) {
        if (j < 4) return new int[] {u8(b, s + j) & 63, u8(b, s + j + 4) & 63};
        return new int[] {(u8(b, s + j + 4) & 0xF) | (u8(b, s + j - 4) >> 6) << 4,
                (u8(b, s + j + 4) >> 4) | (u8(b, s + j) >> 6) << 4};
    }

    static void putHalf(byte[] b, int i, float v) {
        short h = Float.floatToFloat16(v);
        b[i] = (byte) h;
        b[i + 1] = (byte) (h >> 8);
    }

    /** A random finite value for a scale: magnitudes from 2^-10 to 4, either sign. */
    static float randomScale(Random r) {
        return (float) ((r.nextBoolean() ? 1 : -1) * Math.pow(2, -10 + 12 * r.nextDouble()));
    }

    /**
     * x[off .. off + n) as a batch-of-one kernel of {@code type} multiplies it: rounded ({@link
     * #roundedAsLlamaCppsQ8K}) for Q4_K's and Q6_K's rows in whole groups of their {@link
     * RowLanes} copy where {@link RowLanes#INT8_ACTIVATIONS}; as it is for every other row and type.
     */
    static double[] multiplied(GgmlType type, float[] x, int off, int n, boolean grouped) {
        boolean rounded = grouped && RowLanes.ENABLED && RowLanes.INT8_ACTIVATIONS && (type == GgmlType.Q4_K || type == GgmlType.Q6_K);
        if (rounded) return roundedAsLlamaCppsQ8K(x, off, n);
        double[] xk = new double[n];
        for (int i = 0; i < n; i++) xk[i] = x[off + i];
        return xk;
    }

    /**
     * x[off .. off + n) rounded per block of 256 as llama.cpp's {@code quantize_row_q8_K} does, to a
     * symmetric range: q = rint(x * (127 / max|x|)) in floats, x' = q * (max|x| / 127); scalar,
     * written from that definition and not from the engine's vector code.
     */
    static double[] roundedAsLlamaCppsQ8K(float[] x, int off, int n) {
        double[] out = new double[n];
        for (int b = 0; b < n / 256; b++) {
            float max = 0f;
            for (int i = 0; i < 256; i++) max = Math.max(max, Math.abs(x[off + 256 * b + i]));
            float inv = max == 0f ? 0f : 127f / max, step = max / 127f;
            for (int i = 0; i < 256; i++) out[256 * b + i] = Math.rint(x[off + 256 * b + i] * inv) * (double) step;
        }
        return out;
    }

    /** {@code rows} rows of {@code blocks} random well-formed blocks (finite scales). */
    static byte[] randomRows(GgmlType type, Random r, int rows, int blocks) {
        byte[] b = new byte[rows * blocks * type.blockBytes];
        r.nextBytes(b);
        for (int k = 0; k < rows * blocks; k++) {
            int p = k * type.blockBytes;
            switch (type) {
                case F32 -> {
                    int bits = Float.floatToRawIntBits((float) r.nextGaussian() * randomScale(r));
                    for (int i = 0; i < 4; i++) b[p + i] = (byte) (bits >> 8 * i);
                }
                case F16 -> putHalf(b, p, (float) r.nextGaussian());
                case BF16 -> {
                    int bits = Float.floatToRawIntBits((float) r.nextGaussian()) >>> 16;
                    b[p] = (byte) bits;
                    b[p + 1] = (byte) (bits >> 8);
                }
                case Q8_0, Q4_0, Q5_0, IQ4_NL, IQ4_XS -> putHalf(b, p, randomScale(r));
                case Q4_1, Q5_1 -> {
                    putHalf(b, p, randomScale(r));
                    putHalf(b, p + 2, randomScale(r));
                }
                case Q2_K -> {
                    putHalf(b, p + 80, randomScale(r));
                    putHalf(b, p + 82, randomScale(r));
                }
                case Q3_K -> putHalf(b, p + 108, randomScale(r));
                case Q4_K, Q5_K -> {
                    putHalf(b, p, randomScale(r));
                    putHalf(b, p + 2, randomScale(r));
                }
                case Q6_K -> putHalf(b, p + 208, randomScale(r));
            }
        }
        return b;
    }
}
