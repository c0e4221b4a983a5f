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
                case Q8_0, Q4_0 -> putHalf(b, p, randomScale(r));
                case Q4_K -> {
                    putHalf(b, p, randomScale(r));
                    putHalf(b, p + 2, randomScale(r));
                }
                case Q6_K -> putHalf(b, p + 208, randomScale(r));
            }
        }
        return b;
    }
}
