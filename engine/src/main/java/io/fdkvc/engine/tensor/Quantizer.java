package io.fdkvc.engine.tensor;

import java.util.Objects;

/**
 * Encodes floats into the GGML block layouts that the tensor views read (model synthesis for
 * tests and benchmarks). The quantisers are simple round-to-nearest ones: min/max scales, no
 * error-minimising search, so their accuracy is a little below llama.cpp's, the layout the same.
 */
public final class Quantizer {
    private Quantizer() {}

    /** Encodes {@code src[off .. off+n)} ({@code n} a multiple of the block size) as {@code type}. */
    public static byte[] quantize(GgmlType type, float[] src, int off, int n) {
        Objects.checkFromIndexSize(off, n, src.length);
        if (n % type.blockSize != 0)
            throw new IllegalArgumentException(type + " needs a multiple of " + type.blockSize + " values, not " + n);
        for (int i = off; i < off + n; i++)
            if (!Float.isFinite(src[i]) && type != GgmlType.F32 && type != GgmlType.F16 && type != GgmlType.BF16)
                throw new IllegalArgumentException("cannot quantise non-finite value " + src[i] + " at index " + i);
        long bytes = type.bytes(n);
        if (bytes > Integer.MAX_VALUE - 8) throw new IllegalArgumentException(n + " values of " + type + " exceed a byte[]");
        byte[] out = new byte[(int) bytes];
        int nb = n / type.blockSize;
        for (int b = 0; b < nb; b++) {
            int s = off + b * type.blockSize, o = b * type.blockBytes;
            switch (type) {
                case F32 -> putInt(out, o, Float.floatToRawIntBits(src[s]));
                case F16 -> putShort(out, o, Float.floatToFloat16(src[s]));
                case BF16 -> putShort(out, o, floatToBf16(src[s]));
                case Q8_0 -> q8_0(src, s, out, o);
                case Q4_0 -> q4_0(src, s, out, o);
                case Q4_1 -> q4_1(src, s, out, o);
                case Q5_0 -> q5_0(src, s, out, o);
                case Q5_1 -> q5_1(src, s, out, o);
                case Q2_K -> q2_k(src, s, out, o);
                case Q3_K -> q3_k(src, s, out, o);
                case Q4_K -> q4_k(src, s, out, o);
                case Q5_K -> q5_k(src, s, out, o);
                case Q6_K -> q6_k(src, s, out, o);
                case IQ4_NL -> iq4_nl(src, s, out, o);
                case IQ4_XS -> iq4_xs(src, s, out, o);
            }
        }
        return out;
    }

    public static byte[] quantize(GgmlType type, float[] src) {
        return quantize(type, src, 0, src.length);
    }

    /** Round-to-nearest-even truncation of a float to its upper 16 bits; NaN stays NaN. */
    public static short floatToBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) return (short) ((bits >>> 16) | 0x0040);
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    /** The half-precision scale nearest {@code d}; it must stay finite. */
    private static short half(float d) {
        short h = Float.floatToFloat16(d);
        if (!Float.isFinite(Float.float16ToFloat(h)))
            throw new IllegalArgumentException("block scale " + d + " overflows half precision");
        return h;
    }

    private static int clamp(int v, int lo, int hi) {
        return Math.max(lo, Math.min(hi, v));
    }

    /** The element of largest magnitude, with its sign. */
    private static float signedAbsMax(float[] x, int s, int n) {
        float m = 0;
        for (int i = s; i < s + n; i++) if (Math.abs(x[i]) > Math.abs(m)) m = x[i];
        return m;
    }

    /**
     * As ggml's reference quantiser: the quants are {@code x * (1 / d)} for the float scale
     * {@code d = amax / 127} (not for its f16 rounding), rounded half away from zero (C's roundf),
     * so that a file made here is the file llama-quantize makes from the same floats.
     */
    private static void q8_0(float[] x, int s, byte[] out, int o) {
        float amax = Math.abs(signedAbsMax(x, s, 32));
        float d = amax / 127f, id = d != 0 ? 1f / d : 0f;
        putShort(out, o, half(d));
        for (int i = 0; i < 32; i++) out[o + 2 + i] = (byte) roundf(x[s + i] * id);
    }

    /** C's roundf: to nearest, ties away from zero (Math.round rounds ties up). */
    static int roundf(float v) {
        double a = Math.floor(Math.abs((double) v) + 0.5);   // exact: a float plus 0.5 fits a double
        return (int) (v < 0 ? -a : a);
    }

    private static void q4_0(float[] x, int s, byte[] out, int o) {
        // the extreme value maps to nibble 0 (-8), using the asymmetric end of the range
        short h = half(signedAbsMax(x, s, 32) / -8f);
        float d = Float.float16ToFloat(h), inv = d == 0 ? 0 : 1 / d;
        putShort(out, o, h);
        for (int j = 0; j < 16; j++) {
            int lo = clamp(Math.round(x[s + j] * inv) + 8, 0, 15);
            int hi = clamp(Math.round(x[s + 16 + j] * inv) + 8, 0, 15);
            out[o + 2 + j] = (byte) (lo | hi << 4);
        }
    }

    private static void q4_1(float[] x, int s, byte[] out, int o) {
        float lo = Float.MAX_VALUE, hi = -Float.MAX_VALUE;
        for (int i = 0; i < 32; i++) {
            lo = Math.min(lo, x[s + i]);
            hi = Math.max(hi, x[s + i]);
        }
        short hd = half((hi - lo) / 15f), hm = half(lo);
        float d = Float.float16ToFloat(hd), m = Float.float16ToFloat(hm), inv = d == 0 ? 0 : 1 / d;
        putShort(out, o, hd);
        putShort(out, o + 2, hm);
        for (int j = 0; j < 16; j++) {
            int a = clamp(roundf((x[s + j] - m) * inv), 0, 15), b = clamp(roundf((x[s + 16 + j] - m) * inv), 0, 15);
            out[o + 4 + j] = (byte) (a | b << 4);
        }
    }

    /** Five-bit quants {@code q[0..32)} into the fifth-bit word at {@code o} and nibbles at {@code o + 4}. */
    private static void put5(int[] q, byte[] out, int o) {
        int qh = 0;
        for (int j = 0; j < 16; j++) {
            out[o + 4 + j] = (byte) ((q[j] & 0xF) | (q[j + 16] & 0xF) << 4);
            qh |= (q[j] >> 4) << j | (q[j + 16] >> 4) << (j + 16);
        }
        putInt(out, o, qh);
    }

    private static void q5_0(float[] x, int s, byte[] out, int o) {
        short h = half(signedAbsMax(x, s, 32) / -16f);   // the extreme value maps to -16
        float d = Float.float16ToFloat(h), inv = d == 0 ? 0 : 1 / d;
        putShort(out, o, h);
        int[] q = new int[32];
        for (int i = 0; i < 32; i++) q[i] = clamp(roundf(x[s + i] * inv) + 16, 0, 31);
        put5(q, out, o + 2);
    }

    private static void q5_1(float[] x, int s, byte[] out, int o) {
        float lo = Float.MAX_VALUE, hi = -Float.MAX_VALUE;
        for (int i = 0; i < 32; i++) {
            lo = Math.min(lo, x[s + i]);
            hi = Math.max(hi, x[s + i]);
        }
        short hd = half((hi - lo) / 31f), hm = half(lo);
        float d = Float.float16ToFloat(hd), m = Float.float16ToFloat(hm), inv = d == 0 ? 0 : 1 / d;
        putShort(out, o, hd);
        putShort(out, o + 2, hm);
        int[] q = new int[32];
        for (int i = 0; i < 32; i++) q[i] = clamp(roundf((x[s + i] - m) * inv), 0, 31);
        put5(q, out, o + 4);
    }

    /** Q2_K: per group of 16 a 4-bit scale and a 4-bit min against two f16 super-scales. */
    private static void q2_k(float[] x, int s, byte[] out, int o) {
        float[] scale = new float[16], min = new float[16];
        float maxScale = 0, maxMin = 0;
        for (int g = 0; g < 16; g++) {
            float lo = 0, hi = -Float.MAX_VALUE;
            for (int i = 0; i < 16; i++) {
                lo = Math.min(lo, x[s + 16 * g + i]);
                hi = Math.max(hi, x[s + 16 * g + i]);
            }
            scale[g] = Math.max(0, hi - lo) / 3f;
            min[g] = -lo;
            maxScale = Math.max(maxScale, scale[g]);
            maxMin = Math.max(maxMin, min[g]);
        }
        short hd = half(maxScale / 15f), hm = half(maxMin / 15f);
        float d = Float.float16ToFloat(hd), dmin = Float.float16ToFloat(hm);
        putShort(out, o + 80, hd);
        putShort(out, o + 82, hm);
        int[] q = new int[256];
        for (int g = 0; g < 16; g++) {
            int sc = d == 0 ? 0 : clamp(Math.round(scale[g] / d), 0, 15);
            int m = dmin == 0 ? 0 : clamp(Math.round(min[g] / dmin), 0, 15);
            out[o + g] = (byte) (sc | m << 4);
            float dl = d * sc, ml = dmin * m;
            for (int i = 0; i < 16; i++) q[16 * g + i] = dl == 0 ? 0 : clamp(roundf((x[s + 16 * g + i] + ml) / dl), 0, 3);
        }
        // weight 128h + 32j + w: bits 2j of byte 32h + w
        for (int h = 0; h < 2; h++)
            for (int w = 0; w < 32; w++) {
                int b = 0;
                for (int j = 0; j < 4; j++) b |= q[128 * h + 32 * j + w] << (2 * j);
                out[o + 16 + 32 * h + w] = (byte) b;
            }
    }

    /** Q3_K: per group of 16 a signed 6-bit scale; quants -4..3 as 2 low bits and a high-bit mask. */
    private static void q3_k(float[] x, int s, byte[] out, int o) {
        float[] scale = new float[16];
        float ext = 0;
        for (int g = 0; g < 16; g++) {
            scale[g] = signedAbsMax(x, s + 16 * g, 16) / -4f;   // the extreme value maps to -4
            if (Math.abs(scale[g]) > Math.abs(ext)) ext = scale[g];
        }
        short hd = half(ext / -32f);   // the extreme scale maps to -32
        float d = Float.float16ToFloat(hd);
        putShort(out, o + 108, hd);
        int[] sc = new int[16], q = new int[256];
        for (int g = 0; g < 16; g++) {
            sc[g] = d == 0 ? 0 : clamp(Math.round(scale[g] / d), -32, 31);
            float dl = d * sc[g];
            for (int i = 0; i < 16; i++) q[16 * g + i] = (dl == 0 ? 0 : clamp(roundf(x[s + 16 * g + i] / dl), -4, 3)) + 4;
        }
        for (int k = 0; k < 4; k++) {
            int[] u = {sc[k] + 32, sc[4 + k] + 32, sc[8 + k] + 32, sc[12 + k] + 32};
            out[o + 96 + k] = (byte) ((u[0] & 0xF) | (u[2] & 0xF) << 4);
            out[o + 100 + k] = (byte) ((u[1] & 0xF) | (u[3] & 0xF) << 4);
            out[o + 104 + k] = (byte) ((u[0] >> 4) | (u[1] >> 4) << 2 | (u[2] >> 4) << 4 | (u[3] >> 4) << 6);
        }
        for (int h = 0; h < 2; h++)
            for (int w = 0; w < 32; w++) {
                int b = 0;
                for (int j = 0; j < 4; j++) {
                    int v = q[128 * h + 32 * j + w];
                    b |= (v & 3) << (2 * j);
                    if (v >= 4) out[o + w] |= (byte) (1 << (4 * h + j));
                }
                out[o + 32 + 32 * h + w] = (byte) b;
            }
    }

    /** 6-bit scales and mins of the 8 sub-blocks, packed as Q4_K and Q5_K keep them, at {@code o}. */
    private static void packScaleMin(int[] sc, int[] m, byte[] out, int o) {
        for (int j = 0; j < 4; j++) {
            out[o + j] = (byte) ((sc[j] & 63) | (sc[j + 4] >> 4) << 6);
            out[o + 4 + j] = (byte) ((m[j] & 63) | (m[j + 4] >> 4) << 6);
            out[o + 8 + j] = (byte) ((sc[j + 4] & 0xF) | (m[j + 4] & 0xF) << 4);
        }
    }

    /**
     * The part Q4_K and Q5_K share: 8 sub-blocks of 32 weights, each with a 6-bit scale and min
     * under the super-block's f16 d and dmin. Writes d, dmin and the packed scales (bytes 0-15)
     * and returns the 256 quants in [0, maxQ], rounded half away from zero or as Math.round.
     */
    private static int[] scaledMinQuants(float[] x, int s, byte[] out, int o, int maxQ, boolean roundHalfAway) {
        float[] scale = new float[8], min = new float[8];
        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 8; j++) {
            float lo = 0, hi = -Float.MAX_VALUE;
            for (int i = 0; i < 32; i++) {
                lo = Math.min(lo, x[s + 32 * j + i]);
                hi = Math.max(hi, x[s + 32 * j + i]);
            }
            // weights are d*sc*q - dmin*m with m >= 0, so the represented range starts at min(0, lo)
            scale[j] = Math.max(0, hi - lo) / maxQ;
            min[j] = -lo;
            maxScale = Math.max(maxScale, scale[j]);
            maxMin = Math.max(maxMin, min[j]);
        }
        short hd = half(maxScale / 63f), hm = half(maxMin / 63f);
        float d = Float.float16ToFloat(hd), dmin = Float.float16ToFloat(hm);
        int[] sc = new int[8], m = new int[8];
        for (int j = 0; j < 8; j++) {
            sc[j] = d == 0 ? 0 : clamp(Math.round(scale[j] / d), 0, 63);
            m[j] = dmin == 0 ? 0 : clamp(Math.round(min[j] / dmin), 0, 63);
        }
        putShort(out, o, hd);
        putShort(out, o + 2, hm);
        packScaleMin(sc, m, out, o + 4);
        int[] q = new int[256];
        for (int j = 0; j < 8; j++) {
            float es = d * sc[j], eo = dmin * m[j];
            for (int i = 0; i < 32; i++)
                q[32 * j + i] = es == 0 ? 0 : clamp(roundHalfAway ? roundf((x[s + 32 * j + i] + eo) / es) : Math.round((x[s + 32 * j + i] + eo) / es), 0, maxQ);
        }
        return q;
    }

    private static void q5_k(float[] x, int s, byte[] out, int o) {
        int[] q = scaledMinQuants(x, s, out, o, 31, true);
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++) {
                int a = q[64 * c + l], b = q[64 * c + 32 + l];
                out[o + 48 + 32 * c + l] = (byte) ((a & 0xF) | (b & 0xF) << 4);
                out[o + 16 + l] |= (byte) ((a >> 4) << (2 * c) | (b >> 4) << (2 * c + 1));
            }
    }

    /** The index of the IQ4 level nearest {@code v} (levels ascending). */
    private static int nearestLevel(float v) {
        int[] lv = IQ4_NLTensor.LEVELS;
        int best = 0;
        for (int i = 1; i < 16; i++) if (Math.abs(lv[i] - v) < Math.abs(lv[best] - v)) best = i;
        return best;
    }

    /** 32 weights at {@code x[s ..]} as IQ4 nibbles for the effective scale {@code dl}, at {@code o}. */
    private static void iq4Nibbles(float[] x, int s, float dl, byte[] out, int o) {
        float inv = dl == 0 ? 0 : 1 / dl;
        for (int j = 0; j < 16; j++)
            out[o + j] = (byte) (nearestLevel(x[s + j] * inv) | nearestLevel(x[s + 16 + j] * inv) << 4);
    }

    private static void iq4_nl(float[] x, int s, byte[] out, int o) {
        short h = half(signedAbsMax(x, s, 32) / -127f);   // the extreme value maps to level -127
        putShort(out, o, h);
        iq4Nibbles(x, s, Float.float16ToFloat(h), out, o + 2);
    }

    private static void iq4_xs(float[] x, int s, byte[] out, int o) {
        float[] scale = new float[8];
        float ext = 0;
        for (int i = 0; i < 8; i++) {
            scale[i] = signedAbsMax(x, s + 32 * i, 32) / -127f;
            if (Math.abs(scale[i]) > Math.abs(ext)) ext = scale[i];
        }
        short hd = half(ext / -32f);
        float d = Float.float16ToFloat(hd);
        putShort(out, o, hd);
        int hi = 0;
        for (int i = 0; i < 8; i++) {
            int ls = (d == 0 ? 0 : clamp(Math.round(scale[i] / d), -32, 31)) + 32;
            out[o + 4 + i / 2] |= (byte) ((ls & 0xF) << (4 * (i % 2)));
            hi |= (ls >> 4) << (2 * i);
            iq4Nibbles(x, s + 32 * i, d * (ls - 32), out, o + 8 + 16 * i);
        }
        putShort(out, o + 2, (short) hi);
    }

    private static void q4_k(float[] x, int s, byte[] out, int o) {
        int[] q = scaledMinQuants(x, s, out, o, 15, false);
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++)
                out[o + 16 + 32 * c + l] = (byte) (q[64 * c + l] | q[64 * c + 32 + l] << 4);
    }

    private static void q6_k(float[] x, int s, byte[] out, int o) {
        float[] scale = new float[16];
        float maxAbs = 0;
        for (int j = 0; j < 16; j++) {
            scale[j] = signedAbsMax(x, s + 16 * j, 16) / -32f;   // the extreme value maps to q = -32
            maxAbs = Math.max(maxAbs, Math.abs(scale[j]));
        }
        short hd = half(maxAbs / 127f);
        float d = Float.float16ToFloat(hd);
        int[] q = new int[256];
        for (int j = 0; j < 16; j++) {
            int sc = d == 0 ? 0 : clamp(Math.round(scale[j] / d), -128, 127);
            out[o + 192 + j] = (byte) sc;
            float es = d * sc;
            for (int i = 0; i < 16; i++)
                q[16 * j + i] = (es == 0 ? 0 : clamp(Math.round(x[s + 16 * j + i] / es), -32, 31)) + 32;
        }
        putShort(out, o + 208, hd);
        for (int h = 0; h < 2; h++) {
            int ql = o + 64 * h, qh = o + 128 + 32 * h, e = 128 * h;
            for (int l = 0; l < 32; l++) {
                int q1 = q[e + l], q2 = q[e + 32 + l], q3 = q[e + 64 + l], q4 = q[e + 96 + l];
                out[ql + l] = (byte) ((q1 & 0xF) | (q3 & 0xF) << 4);
                out[ql + 32 + l] = (byte) ((q2 & 0xF) | (q4 & 0xF) << 4);
                out[qh + l] = (byte) ((q1 >> 4) | (q2 >> 4) << 2 | (q3 >> 4) << 4 | (q4 >> 4) << 6);
            }
        }
    }

    private static void putShort(byte[] b, int o, short v) {
        b[o] = (byte) v;
        b[o + 1] = (byte) (v >> 8);
    }

    private static void putInt(byte[] b, int o, int v) {
        b[o] = (byte) v;
        b[o + 1] = (byte) (v >> 8);
        b[o + 2] = (byte) (v >> 16);
        b[o + 3] = (byte) (v >> 24);
    }
}
