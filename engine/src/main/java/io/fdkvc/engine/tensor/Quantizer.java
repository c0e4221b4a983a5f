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
                case Q4_K -> q4_k(src, s, out, o);
                case Q6_K -> q6_k(src, s, out, o);
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

    private static void q8_0(float[] x, int s, byte[] out, int o) {
        float amax = Math.abs(signedAbsMax(x, s, 32));
        short h = half(amax / 127f);
        float d = Float.float16ToFloat(h), inv = d == 0 ? 0 : 1 / d;
        putShort(out, o, h);
        for (int i = 0; i < 32; i++) out[o + 2 + i] = (byte) clamp(Math.round(x[s + i] * inv), -127, 127);
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

    private static void q4_k(float[] x, int s, byte[] out, int o) {
        float[] scale = new float[8], min = new float[8];
        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 8; j++) {
            float lo = 0, hi = -Float.MAX_VALUE;
            for (int i = 0; i < 32; i++) {
                lo = Math.min(lo, x[s + 32 * j + i]);
                hi = Math.max(hi, x[s + 32 * j + i]);
            }
            // weights are d*sc*q - dmin*m with m >= 0, so the represented range starts at min(0, lo)
            scale[j] = Math.max(0, hi - lo) / 15f;
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
        for (int j = 0; j < 4; j++) {
            out[o + 4 + j] = (byte) ((sc[j] & 63) | (sc[j + 4] >> 4) << 6);
            out[o + 8 + j] = (byte) ((m[j] & 63) | (m[j + 4] >> 4) << 6);
            out[o + 12 + j] = (byte) ((sc[j + 4] & 0xF) | (m[j + 4] & 0xF) << 4);
        }
        int[] q = new int[256];
        for (int j = 0; j < 8; j++) {
            float es = d * sc[j], eo = dmin * m[j];
            for (int i = 0; i < 32; i++)
                q[32 * j + i] = es == 0 ? 0 : clamp(Math.round((x[s + 32 * j + i] + eo) / es), 0, 15);
        }
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
