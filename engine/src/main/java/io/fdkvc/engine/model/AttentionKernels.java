package io.fdkvc.engine.model;

import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.tensor.Simd;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The numeric kernels of the forward pass, on plain float arrays at offsets: attention scores
 * against the cache's tiled keys, the softmax's exponentials, weighted values, RMSNorm and the
 * feed-forward activations. Each one sums in a fixed order (the same bits in the interpreter and
 * in C2, see {@link Simd}), allocates nothing, and is static so that the forward pass's phase
 * bodies inline it.
 */
final class AttentionKernels {
    /**
     * The kernels' species: lane sums go through {@link Simd#sum}, a fixed fold, because
     * {@code reduceLanes(ADD)} sums in a different order in the interpreter than in C2, and a
     * score or norm differing in its last bit before and after compilation could change a greedy
     * token depending on how warm the JIT is.
     */
    private static final VectorSpecies<Float> S = Simd.F;

    private AttentionKernels() {}

    /**
     * sc[so + i] = q . key i for i < count, from the cache's tiled rotated keys (see
     * {@link KvCache#rotatedKeys}): per tile one vector of lanes, one lane per key, accumulated
     * over the components in order, so each score is one FMA chain over d = 0 .. hd-1 (a fixed
     * order, the same bits in the interpreter and C2) and no lane sum per key. Four tiles at a time
     * keep four independent chains in flight; the last tile writes up to a tile past count
     * (the scratch rows are whole tiles long).
     */
    static void scores(float[] q, float[] tiles, int hd, int count, float[] sc, int so) {
        int T = KvCache.KEY_TILE, tileFloats = T * hd, i = 0, base = 0;
        for (; i + 3 * T < count; i += 4 * T, base += 4 * tileFloats) {
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0;
            for (int d = 0, p = base; d < hd; d++, p += T) {
                FloatVector qd = FloatVector.broadcast(S, q[d]);
                a0 = FloatVector.fromArray(S, tiles, p).fma(qd, a0);
                a1 = FloatVector.fromArray(S, tiles, p + tileFloats).fma(qd, a1);
                a2 = FloatVector.fromArray(S, tiles, p + 2 * tileFloats).fma(qd, a2);
                a3 = FloatVector.fromArray(S, tiles, p + 3 * tileFloats).fma(qd, a3);
            }
            a0.intoArray(sc, so + i);
            a1.intoArray(sc, so + i + T);
            a2.intoArray(sc, so + i + 2 * T);
            a3.intoArray(sc, so + i + 3 * T);
        }
        for (; i < count; i += T, base += tileFloats) {
            FloatVector a0 = FloatVector.zero(S);
            for (int d = 0, p = base; d < hd; d++, p += T) a0 = FloatVector.fromArray(S, tiles, p).fma(FloatVector.broadcast(S, q[d]), a0);
            a0.intoArray(sc, so + i);
        }
    }

    /**
     * {@link #scores} for two queries over the same keys: sc[so + i] = q . key i and
     * sc[so2 + i] = q2 . key i for i < count, each the same FMA chain over d as in scores (the
     * same bits), with each tile's vector loaded once for both.
     */
    static void scoresPair(float[] q, float[] q2, float[] tiles, int hd, int count, float[] sc, int so, int so2) {
        int T = KvCache.KEY_TILE, tileFloats = T * hd, i = 0, base = 0;
        for (; i + 3 * T < count; i += 4 * T, base += 4 * tileFloats) {
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            for (int d = 0, p = base; d < hd; d++, p += T) {
                FloatVector qd = FloatVector.broadcast(S, q[d]), rd = FloatVector.broadcast(S, q2[d]);
                FloatVector k0 = FloatVector.fromArray(S, tiles, p), k1 = FloatVector.fromArray(S, tiles, p + tileFloats);
                FloatVector k2 = FloatVector.fromArray(S, tiles, p + 2 * tileFloats), k3 = FloatVector.fromArray(S, tiles, p + 3 * tileFloats);
                a0 = k0.fma(qd, a0);
                a1 = k1.fma(qd, a1);
                a2 = k2.fma(qd, a2);
                a3 = k3.fma(qd, a3);
                b0 = k0.fma(rd, b0);
                b1 = k1.fma(rd, b1);
                b2 = k2.fma(rd, b2);
                b3 = k3.fma(rd, b3);
            }
            a0.intoArray(sc, so + i);
            a1.intoArray(sc, so + i + T);
            a2.intoArray(sc, so + i + 2 * T);
            a3.intoArray(sc, so + i + 3 * T);
            b0.intoArray(sc, so2 + i);
            b1.intoArray(sc, so2 + i + T);
            b2.intoArray(sc, so2 + i + 2 * T);
            b3.intoArray(sc, so2 + i + 3 * T);
        }
        for (; i < count; i += T, base += tileFloats) {
            FloatVector a0 = FloatVector.zero(S), b0 = a0;
            for (int d = 0, p = base; d < hd; d++, p += T) {
                FloatVector k0 = FloatVector.fromArray(S, tiles, p);
                a0 = k0.fma(FloatVector.broadcast(S, q[d]), a0);
                b0 = k0.fma(FloatVector.broadcast(S, q2[d]), b0);
            }
            a0.intoArray(sc, so + i);
            b0.intoArray(sc, so2 + i);
        }
    }

    /**
     * Whether {@link #scoresEight} runs: its 24 accumulators and three key vectors need AVX-512's
     * 32 vector registers (with AVX2's 16 they would spill).
     */
    static final boolean EIGHT_QUERIES = S.length() >= 16;

    /**
     * {@link #scores} for eight queries over the same keys, query j at {@code q[j * hd ..]}:
     * sc[rows[j] + i] = q_j . key i for every i in the tiles that hold the first {@code count} keys
     * (a query that sees fewer keys gets scores past its own count, which its caller does not
     * read; rows are whole tiles long). A small matrix product: per component d, three tiles of
     * keys (48 keys) are loaded once and multiplied by the eight queries' broadcast components,
     * 24 accumulators in registers, so each key vector read from the caches feeds eight FMAs
     * where {@link #scoresPair} feeds two. Every score is still one FMA chain over d = 0 .. hd-1
     * from zero, the same bits as {@link #scores}.
     */
    static void scoresEight(float[] q, float[] tiles, int hd, int count, float[] sc, int[] rows) {
        int T = KvCache.KEY_TILE, tileFloats = T * hd, n = (count + T - 1) / T, t = 0;
        int q1 = hd, q2 = 2 * hd, q3 = 3 * hd, q4 = 4 * hd, q5 = 5 * hd, q6 = 6 * hd, q7 = 7 * hd;
        for (; t + 3 <= n; t += 3) {
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, b0 = a0, b1 = a0, b2 = a0, c0 = a0, c1 = a0, c2 = a0;
            FloatVector d0 = a0, d1 = a0, d2 = a0, e0 = a0, e1 = a0, e2 = a0, f0 = a0, f1 = a0, f2 = a0;
            FloatVector g0 = a0, g1 = a0, g2 = a0, h0 = a0, h1 = a0, h2 = a0;
            for (int d = 0, p = t * tileFloats; d < hd; d++, p += T) {
                FloatVector k0 = FloatVector.fromArray(S, tiles, p), k1 = FloatVector.fromArray(S, tiles, p + tileFloats);
                FloatVector k2 = FloatVector.fromArray(S, tiles, p + 2 * tileFloats);
                FloatVector x = FloatVector.broadcast(S, q[d]);
                a0 = k0.fma(x, a0); a1 = k1.fma(x, a1); a2 = k2.fma(x, a2);
                x = FloatVector.broadcast(S, q[q1 + d]);
                b0 = k0.fma(x, b0); b1 = k1.fma(x, b1); b2 = k2.fma(x, b2);
                x = FloatVector.broadcast(S, q[q2 + d]);
                c0 = k0.fma(x, c0); c1 = k1.fma(x, c1); c2 = k2.fma(x, c2);
                x = FloatVector.broadcast(S, q[q3 + d]);
                d0 = k0.fma(x, d0); d1 = k1.fma(x, d1); d2 = k2.fma(x, d2);
                x = FloatVector.broadcast(S, q[q4 + d]);
                e0 = k0.fma(x, e0); e1 = k1.fma(x, e1); e2 = k2.fma(x, e2);
                x = FloatVector.broadcast(S, q[q5 + d]);
                f0 = k0.fma(x, f0); f1 = k1.fma(x, f1); f2 = k2.fma(x, f2);
                x = FloatVector.broadcast(S, q[q6 + d]);
                g0 = k0.fma(x, g0); g1 = k1.fma(x, g1); g2 = k2.fma(x, g2);
                x = FloatVector.broadcast(S, q[q7 + d]);
                h0 = k0.fma(x, h0); h1 = k1.fma(x, h1); h2 = k2.fma(x, h2);
            }
            int i = t * T, r = rows[0] + i;
            a0.intoArray(sc, r); a1.intoArray(sc, r + T); a2.intoArray(sc, r + 2 * T);
            r = rows[1] + i;
            b0.intoArray(sc, r); b1.intoArray(sc, r + T); b2.intoArray(sc, r + 2 * T);
            r = rows[2] + i;
            c0.intoArray(sc, r); c1.intoArray(sc, r + T); c2.intoArray(sc, r + 2 * T);
            r = rows[3] + i;
            d0.intoArray(sc, r); d1.intoArray(sc, r + T); d2.intoArray(sc, r + 2 * T);
            r = rows[4] + i;
            e0.intoArray(sc, r); e1.intoArray(sc, r + T); e2.intoArray(sc, r + 2 * T);
            r = rows[5] + i;
            f0.intoArray(sc, r); f1.intoArray(sc, r + T); f2.intoArray(sc, r + 2 * T);
            r = rows[6] + i;
            g0.intoArray(sc, r); g1.intoArray(sc, r + T); g2.intoArray(sc, r + 2 * T);
            r = rows[7] + i;
            h0.intoArray(sc, r); h1.intoArray(sc, r + T); h2.intoArray(sc, r + 2 * T);
        }
        for (; t < n; t++) {
            FloatVector a = FloatVector.zero(S), b = a, c = a, d0 = a, e = a, f = a, g = a, h = a;
            for (int d = 0, p = t * tileFloats; d < hd; d++, p += T) {
                FloatVector k = FloatVector.fromArray(S, tiles, p);
                a = k.fma(FloatVector.broadcast(S, q[d]), a);
                b = k.fma(FloatVector.broadcast(S, q[q1 + d]), b);
                c = k.fma(FloatVector.broadcast(S, q[q2 + d]), c);
                d0 = k.fma(FloatVector.broadcast(S, q[q3 + d]), d0);
                e = k.fma(FloatVector.broadcast(S, q[q4 + d]), e);
                f = k.fma(FloatVector.broadcast(S, q[q5 + d]), f);
                g = k.fma(FloatVector.broadcast(S, q[q6 + d]), g);
                h = k.fma(FloatVector.broadcast(S, q[q7 + d]), h);
            }
            int i = t * T;
            a.intoArray(sc, rows[0] + i); b.intoArray(sc, rows[1] + i); c.intoArray(sc, rows[2] + i); d0.intoArray(sc, rows[3] + i);
            e.intoArray(sc, rows[4] + i); f.intoArray(sc, rows[5] + i); g.intoArray(sc, rows[6] + i); h.intoArray(sc, rows[7] + i);
        }
    }

    /**
     * sc[so + i] = sc[so + i] * scale (+ bias[i] where bias is not null) for i < count, vectorised;
     * returns the max of the results. Each result is the scalar loop's float (one product, then
     * one sum); the max is exact in any order, except that a NaN score makes it NaN (as it makes
     * the row's softmax NaN either way).
     */
    static float scaleBiasMax(float[] sc, int so, int count, float scale, float[] bias) {
        int i = 0;
        float max = Float.NEGATIVE_INFINITY;
        if (count >= S.length()) {
            FloatVector m = FloatVector.broadcast(S, Float.NEGATIVE_INFINITY);
            for (int up = S.loopBound(count); i < up; i += S.length()) {
                FloatVector z = FloatVector.fromArray(S, sc, so + i).mul(scale);
                if (bias != null) z = z.add(FloatVector.fromArray(S, bias, i));
                z.intoArray(sc, so + i);
                m = m.max(z);
            }
            max = m.reduceLanes(VectorOperators.MAX);
        }
        for (; i < count; i++) {
            float z = sc[so + i] * scale;
            if (bias != null) z += bias[i];
            sc[so + i] = z;
            max = Math.max(max, z);
        }
        return max;
    }

    /**
     * sc[so + i] = exp(sc[so + i] - max) for i < count, vectorised with {@link Simd#exp} (not the
     * Vector API's EXP, whose bits differ between interpreter and C2); returns the sum.
     */
    static float expInPlace(float[] sc, int so, int count, float max, float[] lanes) {
        int i = 0;
        float sum = 0;
        if (count >= S.length()) {
            FloatVector acc = FloatVector.zero(S);
            for (int up = S.loopBound(count); i < up; i += S.length()) {
                FloatVector e = Simd.exp(FloatVector.fromArray(S, sc, so + i).sub(max));
                e.intoArray(sc, so + i);
                acc = acc.add(e);
            }
            acc.intoArray(lanes, 0);
            sum = Simd.sum(lanes, 0);
        }
        for (; i < count; i++) {
            float e = (float) Math.exp(sc[so + i] - max);
            sc[so + i] = e;
            sum += e;
        }
        return sum;
    }

    /**
     * out[o .. o+hd) = scale * sum_i p[i] * values[i*hd ..]. The output block stays in registers
     * (four vectors at a time) while the entries stream by, instead of a load and store of the
     * output per entry.
     */
    static void weightedValues(float[] p, int po, int count, float scale, float[] vals, int hd, float[] out, int o) {
        int L = S.length(), d = 0;
        for (; d + 4 * L <= hd; d += 4 * L) {
            // even entries into a, odd ones into b: eight FMA chains instead of four, so the
            // FMA latency no longer bounds the loop; a + b at the end (a fixed order)
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            int i = 0, r = d;
            for (; i + 1 < count; i += 2, r += 2 * hd) {
                FloatVector pi = FloatVector.broadcast(S, p[po + i]), pj = FloatVector.broadcast(S, p[po + i + 1]);
                a0 = FloatVector.fromArray(S, vals, r).fma(pi, a0);
                a1 = FloatVector.fromArray(S, vals, r + L).fma(pi, a1);
                a2 = FloatVector.fromArray(S, vals, r + 2 * L).fma(pi, a2);
                a3 = FloatVector.fromArray(S, vals, r + 3 * L).fma(pi, a3);
                b0 = FloatVector.fromArray(S, vals, r + hd).fma(pj, b0);
                b1 = FloatVector.fromArray(S, vals, r + hd + L).fma(pj, b1);
                b2 = FloatVector.fromArray(S, vals, r + hd + 2 * L).fma(pj, b2);
                b3 = FloatVector.fromArray(S, vals, r + hd + 3 * L).fma(pj, b3);
            }
            if (i < count) {
                FloatVector pi = FloatVector.broadcast(S, p[po + i]);
                a0 = FloatVector.fromArray(S, vals, r).fma(pi, a0);
                a1 = FloatVector.fromArray(S, vals, r + L).fma(pi, a1);
                a2 = FloatVector.fromArray(S, vals, r + 2 * L).fma(pi, a2);
                a3 = FloatVector.fromArray(S, vals, r + 3 * L).fma(pi, a3);
            }
            a0 = a0.add(b0);
            a1 = a1.add(b1);
            a2 = a2.add(b2);
            a3 = a3.add(b3);
            a0.mul(scale).intoArray(out, o + d);
            a1.mul(scale).intoArray(out, o + d + L);
            a2.mul(scale).intoArray(out, o + d + 2 * L);
            a3.mul(scale).intoArray(out, o + d + 3 * L);
        }
        for (; d + L <= hd; d += L) {
            FloatVector a0 = FloatVector.zero(S);
            for (int i = 0, r = d; i < count; i++, r += hd) a0 = FloatVector.fromArray(S, vals, r).fma(FloatVector.broadcast(S, p[po + i]), a0);
            a0.mul(scale).intoArray(out, o + d);
        }
        for (; d < hd; d++) {
            float a = 0;
            for (int i = 0, r = d; i < count; i++, r += hd) a += p[po + i] * vals[r];
            out[o + d] = a * scale;
        }
    }

    /**
     * {@link #weightedValues} for two query heads that read the same values with the same count:
     * out[o ..] from the weights at p[po ..] and out[o + hd ..] from those at p[po2 ..]. Every
     * output is the same chains as there (even and odd entries, added, then scaled), so the same
     * bits; each value vector is loaded once for both heads, which halves the loads per FMA's
     * worth of work and the values' traffic from L2 (a 1B head's 320 entries are 80 KB, more than
     * L1). Only for head dimensions of whole blocks of four vectors ({@link #pairsValues}).
     */
    static void weightedValuesPair(float[] p, int po, int po2, int count, float scale, float scale2, float[] vals, int hd, float[] out, int o) {
        int L = S.length();
        for (int d = 0; d < hd; d += 4 * L) {
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            FloatVector e0 = a0, e1 = a0, e2 = a0, e3 = a0, f0 = a0, f1 = a0, f2 = a0, f3 = a0;
            int i = 0, r = d;
            for (; i + 1 < count; i += 2, r += 2 * hd) {
                FloatVector pi = FloatVector.broadcast(S, p[po + i]), qi = FloatVector.broadcast(S, p[po2 + i]);
                FloatVector v0 = FloatVector.fromArray(S, vals, r), v1 = FloatVector.fromArray(S, vals, r + L);
                FloatVector v2 = FloatVector.fromArray(S, vals, r + 2 * L), v3 = FloatVector.fromArray(S, vals, r + 3 * L);
                a0 = v0.fma(pi, a0); a1 = v1.fma(pi, a1); a2 = v2.fma(pi, a2); a3 = v3.fma(pi, a3);
                e0 = v0.fma(qi, e0); e1 = v1.fma(qi, e1); e2 = v2.fma(qi, e2); e3 = v3.fma(qi, e3);
                FloatVector pj = FloatVector.broadcast(S, p[po + i + 1]), qj = FloatVector.broadcast(S, p[po2 + i + 1]);
                FloatVector w0 = FloatVector.fromArray(S, vals, r + hd), w1 = FloatVector.fromArray(S, vals, r + hd + L);
                FloatVector w2 = FloatVector.fromArray(S, vals, r + hd + 2 * L), w3 = FloatVector.fromArray(S, vals, r + hd + 3 * L);
                b0 = w0.fma(pj, b0); b1 = w1.fma(pj, b1); b2 = w2.fma(pj, b2); b3 = w3.fma(pj, b3);
                f0 = w0.fma(qj, f0); f1 = w1.fma(qj, f1); f2 = w2.fma(qj, f2); f3 = w3.fma(qj, f3);
            }
            if (i < count) {
                FloatVector pi = FloatVector.broadcast(S, p[po + i]), qi = FloatVector.broadcast(S, p[po2 + i]);
                FloatVector v0 = FloatVector.fromArray(S, vals, r), v1 = FloatVector.fromArray(S, vals, r + L);
                FloatVector v2 = FloatVector.fromArray(S, vals, r + 2 * L), v3 = FloatVector.fromArray(S, vals, r + 3 * L);
                a0 = v0.fma(pi, a0); a1 = v1.fma(pi, a1); a2 = v2.fma(pi, a2); a3 = v3.fma(pi, a3);
                e0 = v0.fma(qi, e0); e1 = v1.fma(qi, e1); e2 = v2.fma(qi, e2); e3 = v3.fma(qi, e3);
            }
            a0.add(b0).mul(scale).intoArray(out, o + d);
            a1.add(b1).mul(scale).intoArray(out, o + d + L);
            a2.add(b2).mul(scale).intoArray(out, o + d + 2 * L);
            a3.add(b3).mul(scale).intoArray(out, o + d + 3 * L);
            e0.add(f0).mul(scale2).intoArray(out, o + hd + d);
            e1.add(f1).mul(scale2).intoArray(out, o + hd + d + L);
            e2.add(f2).mul(scale2).intoArray(out, o + hd + d + 2 * L);
            e3.add(f3).mul(scale2).intoArray(out, o + hd + d + 3 * L);
        }
    }

    /**
     * a[ao + i] = silu(a[ao + i]) * b[bo + i] = a / (1 + e^-a) * b for i < n, a vector at a time with
     * {@link Simd#exp} (the scalar Math.exp loop held 9% of a prefill-heavy JFR profile's samples); the
     * row's last n % lanes units in scalar code.
     */
    static void swiglu(float[] a, int ao, float[] b, int bo, int n) {
        int i = 0;
        for (int up = S.loopBound(n); i < up; i += S.length()) {
            FloatVector g = FloatVector.fromArray(S, a, ao + i);
            FloatVector e = Simd.exp(g.neg());
            g.div(e.add(1f)).mul(FloatVector.fromArray(S, b, bo + i)).intoArray(a, ao + i);
        }
        for (; i < n; i++) {
            float g = a[ao + i];
            a[ao + i] = g / (1f + (float) Math.exp(-g)) * b[bo + i];
        }
    }

    /** sqrt(2 / pi) and the cubic coefficient of the tanh approximation of gelu, doubled for the sigmoid form. */
    private static final float GELU_K = (float) (2 * Math.sqrt(2 / Math.PI)), GELU_C = 0.044715f;

    /**
     * a[ao + i] = gelu(a[ao + i]) * b[bo + i] for i < n, gelu in its tanh approximation (as ggml and
     * Gemma use it): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed as the equal
     * x / (1 + e^-(2 sqrt(2/pi) (x + 0.044715 x^3))), a vector at a time with {@link Simd#exp}.
     */
    static void geglu(float[] a, int ao, float[] b, int bo, int n) {
        int i = 0;
        for (int up = S.loopBound(n); i < up; i += S.length()) {
            FloatVector g = FloatVector.fromArray(S, a, ao + i);
            FloatVector inner = g.mul(g).mul(g).mul(GELU_C).add(g).mul(GELU_K);
            FloatVector e = Simd.exp(inner.neg());
            g.div(e.add(1f)).mul(FloatVector.fromArray(S, b, bo + i)).intoArray(a, ao + i);
        }
        for (; i < n; i++) {
            float g = a[ao + i], inner = (g * g * g * GELU_C + g) * GELU_K;
            a[ao + i] = g / (1f + (float) Math.exp(-inner)) * b[bo + i];
        }
    }

    /** Whether {@link #weightedValuesPair} serves heads of {@code headDim}: whole blocks of four vectors. */
    static boolean pairsValues(int headDim) {
        return headDim % (4 * S.length()) == 0;
    }

    /** out = weight * x / rms(x), as llama2.c: 1 / sqrt(mean(x^2) + eps). */
    static void rmsnorm(float[] out, int oOff, float[] x, int xOff, float[] weight, int n, float eps) {
        float ss = Simd.dot(x, xOff, x, xOff, n);
        ss = ss / n + eps;
        ss = 1f / (float) Math.sqrt(ss);
        for (int i = 0; i < n; i++) out[oOff + i] = weight[i] * (ss * x[xOff + i]);
    }
}
