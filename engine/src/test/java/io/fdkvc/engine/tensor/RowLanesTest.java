package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The batch-of-one products of Q4_K, Q6_K and Q8_0 on their {@link RowLanes} copies (groups of L rows,
 * one per lane): against hand-computed dots, against the independent scalar decoder
 * ({@link Reference}) summed in double, and for the same bits whatever the split of the rows over
 * calls. With fewer than 8 float lanes the row kernel runs instead and the same assertions hold.
 */
class RowLanesTest {
    private static final int L = Simd.L;

    @Test
    void theRearrangedKernelsRunWhereTheVectorsSuitThem() {
        assertThat(RowLanes.ENABLED).isEqualTo(L >= 8 && System.getProperty("fdkvc.rowLanes") == null);
    }

    /**
     * The copies' memory ({@link RowLanes#memory}) in the default 2 MiB pages: a copy of 2 MiB or
     * more starts on a 2 MiB boundary; smaller ones are cut from a shared slab, each on a base page
     * of its own start and past the one before (or at the start of a new slab), zeroed and apart.
     */
    @Test
    void copiesStartWhereTheirPagesCanBeHuge() {
        if (System.getProperty("fdkvc.hugePages") == null) assertThat(RowLanes.PAGES).as("the default pages").isEqualTo(AnonymousMemory.Pages.HUGE);
        if (RowLanes.PAGES != AnonymousMemory.Pages.HUGE) return;
        MemorySegment big = RowLanes.memory(3L << 20);
        assertThat(big.address() % AnonymousMemory.HUGE_PAGE).as("a large copy's start in its 2 MiB").isZero();
        MemorySegment a = RowLanes.memory(5000), b = RowLanes.memory(100);
        assertThat(a.byteSize()).isEqualTo(5000);
        assertThat(b.byteSize()).isEqualTo(100);
        assertThat(a.address() % AnonymousMemory.PAGE).isZero();
        assertThat(b.address() == a.address() + 2 * AnonymousMemory.PAGE || b.address() % AnonymousMemory.HUGE_PAGE == 0)
                .as("the second small copy at the first's next page (%x after %x), or at a new slab", b.address(), a.address()).isTrue();
        for (long i = 0; i < a.byteSize(); i++) assertThat(a.get(ValueLayout.JAVA_BYTE, i)).isZero();
        a.fill((byte) 7);
        for (long i = 0; i < b.byteSize(); i++) assertThat(b.get(ValueLayout.JAVA_BYTE, i)).as("b's byte %d after a is written", i).isZero();
    }

    /**
     * One group and one row after it, 256 columns, x all ones. Row k: d = 0.5, dmin = 0.25, the
     * scale of sub-block j is j + 1, every min 1, every nibble k % 16, so its dot is
     * sum over j of 32 (0.5 (j + 1) q - 0.25) = 32 (18 q - 2) = 576 q - 64.
     */
    @Test
    void q4kRowsByHand() {
        int rows = L + 1;
        byte[] b = new byte[rows * 144];
        for (int k = 0; k < rows; k++) {
            int p = k * 144;
            b[p] = 0x00;
            b[p + 1] = 0x38;    // f16 0.5
            b[p + 2] = 0x00;
            b[p + 3] = 0x34;    // f16 0.25
            for (int j = 0; j < 4; j++) {
                b[p + 4 + j] = (byte) (j + 1);               // scales 1-4
                b[p + 8 + j] = 1;                            // mins 1
                b[p + 12 + j] = (byte) ((j + 5) | 1 << 4);   // scales 5-8 (low nibble), mins 1 (high)
            }
            int q = k % 16;
            for (int i = 0; i < 128; i++) b[p + 16 + i] = (byte) (q | q << 4);
        }
        float[] out = product(GgmlType.Q4_K, b, rows, 256, ones(256));
        for (int k = 0; k < rows; k++) assertThat(out[k]).as("row %d", k).isEqualTo(576f * (k % 16) - 64f);
    }

    /**
     * One group and one row after it, 256 columns, x all ones. Row k: d = 0.5, every scale 1,
     * the 6-bit value of weight y is k % 64 for even y and 32 for odd y, so its dot is
     * 0.5 (128 (k % 64) + 128 * 32 - 256 * 32) = 64 (k % 64) - 2048. The bits are placed as
     * ggml's layout has them (Q6_KTensor's class comment).
     */
    @Test
    void q6kRowsByHand() {
        int rows = L + 1;
        byte[] b = new byte[rows * 210];
        for (int k = 0; k < rows; k++) {
            int p = k * 210;
            int[] q = new int[256];
            for (int y = 0; y < 256; y++) q[y] = y % 2 == 0 ? k % 64 : 32;
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l++) {
                    int y = 128 * h + l;
                    b[p + 64 * h + l] = (byte) ((q[y] & 15) | (q[y + 64] & 15) << 4);
                    b[p + 64 * h + l + 32] = (byte) ((q[y + 32] & 15) | (q[y + 96] & 15) << 4);
                    b[p + 128 + 32 * h + l] = (byte) (q[y] >> 4 | (q[y + 32] >> 4) << 2 | (q[y + 64] >> 4) << 4 | (q[y + 96] >> 4) << 6);
                }
            }
            for (int s = 0; s < 16; s++) b[p + 192 + s] = 1;
            b[p + 208] = 0x00;
            b[p + 209] = 0x38;   // f16 0.5
        }
        float[] out = product(GgmlType.Q6_K, b, rows, 256, ones(256));
        for (int k = 0; k < rows; k++) assertThat(out[k]).as("row %d", k).isEqualTo(64f * (k % 64) - 2048f);
    }

    /**
     * One group and one row after it, two blocks of 32 columns. Row k: block 0 has d = 0.5 and
     * every q = k % 16 - 8, x all ones; block 1 has d = 0.25, q = -128, 127, then 1 thirty
     * times, against x_j = j, so its dot is 0.5 * 32 (k % 16 - 8) + 0.25 (127 + 2 + ... + 31)
     * = 16 (k % 16 - 8) + 155.5: the extremes of a signed byte, and each column in its place.
     */
    @Test
    void q80RowsByHand() {
        int rows = L + 1;
        byte[] b = new byte[rows * 68];
        for (int k = 0; k < rows; k++) {
            int p = k * 68;
            b[p] = 0x00;
            b[p + 1] = 0x38;    // f16 0.5
            for (int j = 0; j < 32; j++) b[p + 2 + j] = (byte) (k % 16 - 8);
            b[p + 34] = 0x00;
            b[p + 35] = 0x34;   // f16 0.25
            b[p + 36] = (byte) -128;
            b[p + 37] = 127;
            for (int j = 2; j < 32; j++) b[p + 36 + j] = 1;
        }
        float[] x = ones(64);
        for (int j = 0; j < 32; j++) x[32 + j] = j;
        float[] out = product(GgmlType.Q8_0, b, rows, 64, x);
        for (int k = 0; k < rows; k++) assertThat(out[k]).as("row %d", k).isEqualTo(16f * (k % 16 - 8) + 155.5f);
    }

    /**
     * Q8_0's copy takes the file's blocks in pairs, each d kept as its f16 bits and widened in the
     * kernel: a matrix with an odd number of blocks a row, or a d that is not finite (an infinity:
     * the widening would make it finite), has no copy, and its products are the row kernel's
     * (here: 3 * 32 columns of ones at d = 1, and an infinite d, whose row comes out infinite).
     */
    @Test
    void q80WithoutACopyWhereItsFormDoesNotFit() {
        if (!RowLanes.ENABLED) return;   // no copies at all
        int rows = L + 1;
        for (int blocks : new int[] {3, 2}) {
            byte[] b = new byte[rows * blocks * 34];
            for (int k = 0; k < rows; k++) {
                for (int c = 0; c < blocks; c++) {
                    int p = (k * blocks + c) * 34;
                    b[p + 1] = 0x3C;   // f16 1.0
                    for (int j = 0; j < 32; j++) b[p + 2 + j] = 1;
                }
            }
            if (blocks == 2) b[1] = 0x7C;   // row 0's first d: f16 infinity
            SegmentTensor t = (SegmentTensor) Tensors.view(GgmlType.Q8_0, MemorySegment.ofArray(b), rows, blocks * 32);
            assertThat(t.rowLanes()).as("%d blocks a row", blocks).isNull();
            float[] out = product(GgmlType.Q8_0, b, rows, blocks * 32, ones(blocks * 32));
            for (int k = blocks == 2 ? 1 : 0; k < rows; k++) assertThat(out[k]).as("%d blocks, row %d", blocks, k).isEqualTo(32f * blocks);
            if (blocks == 2) assertThat(out[0]).isEqualTo(Float.POSITIVE_INFINITY);
        }
    }

    /**
     * Q4_K's copy keeps d and dmin as f16 bits too: a tensor with an infinite or NaN one has no
     * copy (its rows from {@link Reference#randomRows}, finite, take one until a d is set to
     * infinity or a dmin to NaN).
     */
    @Test
    void q4kWithoutACopyWhereAScaleIsNotFinite() {
        if (!RowLanes.ENABLED) return;   // no copies at all
        int rows = L + 1, cols = 512;
        for (int bad = 0; bad < 3; bad++) {
            byte[] b = Reference.randomRows(GgmlType.Q4_K, new Random(bad), rows, cols / 256);
            int p = ((rows - 1) * 2 + 1) * 144;   // the last row's second super-block
            if (bad == 1) b[p + 1] = 0x7C;   // d: f16 infinity
            if (bad == 2) b[p + 3] = 0x7E;   // dmin: f16 NaN
            SegmentTensor t = (SegmentTensor) Tensors.view(GgmlType.Q4_K, MemorySegment.ofArray(b), rows, cols);
            if (bad == 0) assertThat(t.rowLanes()).isNotNull();
            else assertThat(t.rowLanes()).as("scale %d not finite", bad).isNull();
        }
    }

    /**
     * Random rows (three groups and five more) against the scalar decoder's rows dotted in double
     * with x as the kernel multiplies it: as it is (Q8_0, the rows after the groups, or {@code
     * fdkvc.int8Activations=false}), else rounded to integers per 256 columns as {@link Reference#roundedAsLlamaCppsQ8K} does it
     * independently; within a few float ulps of the sum of |w x| (the integer sums are exact).
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q6_K", "Q8_0"})
    void everyRowIsItsDotWithX(GgmlType type) {
        checkEveryRow(type);
    }

    static void checkEveryRow(GgmlType type) {
        Random r = new Random(type.ordinal() * 7 + 1);
        int rows = 3 * L + 5, cols = 768, blocks = cols / type.blockSize;
        byte[] bytes = Reference.randomRows(type, r, rows, blocks);
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        float[] out = product(type, bytes, rows, cols, x);
        for (int row = 0; row < rows; row++) {
            double[] xk = Reference.multiplied(type, x, 0, cols, row < rows / L * L);
            float[] w = Reference.decode(type, bytes, (int) (row * type.bytes(cols)), cols);
            double exact = 0, mag = 0;
            for (int i = 0; i < cols; i++) {
                exact += w[i] * xk[i];
                mag += Math.abs(w[i] * xk[i]);
            }
            assertThat((double) out[row]).as("%s row %d", type, row).isCloseTo(exact, Offset.offset(4 * cols * Math.ulp((float) mag) + 1e-30));
        }
    }

    /**
     * The kernels with x in floats ({@code fdkvc.int8Activations=false}) and the integer kernels
     * on 8-float-lane vectors ({@code fdkvc.vectorBits=256}, an AVX2 machine's shape: groups of 8
     * rows, 16 short lanes), both fixed when the classes load, checked as above in a child JVM.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"-Dfdkvc.int8Activations=false", "-Dfdkvc.vectorBits=256"})
    void theOtherKernelsToo(String property) throws Exception {
        ChildJvm jvm = ChildJvm.run(300, List.of(property), RowLanesTest.class);
        String out = jvm.output();
        assertThat(jvm.exitValue()).as(out).isZero();
        assertThat(out).contains("Q4_K rows right", "Q6_K rows right", "Q8_0 rows right")
                .contains(property.contains("int8") ? "int8 activations false" : "int8 activations true, float lanes 8");
    }

    /**
     * A bad value of a kernel property fails {@link FloatTensor#checkKernelProperties} on the
     * calling thread with its {@link InputException} (in the class's initialisation error), which
     * the loader calls before it makes the copies on pool threads.
     */
    @Test
    void aBadKernelPropertyFailsWhereItIsChecked() throws Exception {
        for (String property : new String[] {"fdkvc.int8Activations", "fdkvc.rowLanes", "fdkvc.hugePages"}) {
            String out = ChildJvm.run(120, List.of("-D" + property + "=maybe"), RowLanesTest.class, "check").output();
            assertThat(out).as(property).contains("InputException: system property " + property + " must be true or false, got 'maybe'");
        }
    }

    /**
     * Child JVM: {@link #checkEveryRow} for each type with this JVM's properties, exit 1 on a
     * difference; with the argument {@code check}, {@link FloatTensor#checkKernelProperties} and
     * what it threw.
     */
    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("check")) {
            try {
                FloatTensor.checkKernelProperties();
                System.out.println("properties read");
            } catch (ExceptionInInitializerError e) {
                System.out.println(e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
            }
            return;
        }
        System.out.println("int8 activations " + RowLanes.INT8_ACTIVATIONS + ", float lanes " + L);
        for (GgmlType type : new GgmlType[] {GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q8_0}) {
            try {
                checkEveryRow(type);
                System.out.println(type + " rows right");
            } catch (AssertionError e) {
                System.out.println(type + ": " + e.getMessage());
                System.exit(1);
            }
        }
    }

    /**
     * {@link Int8RowLanes#roundToBytes}: every value an integer in [-127, 127], the block's largest |x|
     * at +-127, each within half a step (dx / 2, plus 1e-4 of a step: x * (127 / max) is rounded in floats) of x / dx's exact value, and equal to the scalar
     * definition above.
     */
    @Property(tries = 300)
    void xRoundsToBytesWithinHalfAStep(@ForAll long seed, @ForAll @IntRange(min = 1, max = 3) int blocks, @ForAll @IntRange(min = -20, max = 20) int exponent) {
        if (!RowLanes.ENABLED) return;
        Random r = new Random(seed);
        int cols = 256 * blocks, off = 5;
        float[] x = new float[off + cols];
        for (int i = off; i < x.length; i++) x[i] = r.nextInt(9) == 0 ? 0f : (float) (r.nextGaussian() * Math.pow(2, exponent));
        if (blocks > 1) java.util.Arrays.fill(x, off + 256, off + 512, 0f);   // a block of zeros
        int[] xr = new int[cols];
        float[] dx = new float[blocks];
        Int8RowLanes.roundToBytes(x, off, cols, xr, dx);
        double[] ref = Reference.roundedAsLlamaCppsQ8K(x, off, cols);
        for (int b = 0; b < blocks; b++) {
            int top = 0;
            for (int i = 256 * b; i < 256 * b + 256; i++) {
                assertThat(xr[i]).as("x[%d]", i).isBetween(-127, 127);
                assertThat(xr[i] * (double) dx[b]).as("x[%d] = %s", i, x[off + i]).isEqualTo(ref[i]);
                if (dx[b] > 0) assertThat(Math.abs(x[off + i] / (double) dx[b] - xr[i])).as("x[%d]'s rounding", i).isLessThanOrEqualTo(0.5 + 1e-4);
                top = Math.max(top, Math.abs(xr[i]));
            }
            assertThat(top).as("block %d's largest", b).isEqualTo(dx[b] == 0 ? 0 : 127);
        }
    }

    /**
     * {@link Int8RowLanes#pairs} (gathered and summed in vectors) against its definition written
     * as scalars: for any rounded x in [-127, 127] and any pairing of the block's columns (a
     * random one, and Q4_K's and Q6_K's own with their run lengths 32 and 16 and scales 1 and 32),
     * {@code xi[128b + j] = (x[lo[j]] & 0xFFFF) | x[hi[j]] << 16} and {@code xs[b * sums + k]} the
     * scale times the sum over the k-th run.
     */
    @Property(tries = 200)
    void xPairsAreTheirScalarDefinition(@ForAll long seed, @ForAll @IntRange(min = 1, max = 3) int blocks, @ForAll @IntRange(min = 0, max = 2) int kind) {
        if (!RowLanes.ENABLED) return;
        Random r = new Random(seed);
        int cols = 256 * blocks;
        int[] lo, hi;
        int sums;
        float scale;
        if (kind == 2) {
            // any pairing of the block's 256 columns
            lo = new int[128];
            hi = new int[128];
            List<Integer> perm = new java.util.ArrayList<>();
            for (int i = 0; i < 256; i++) perm.add(i);
            java.util.Collections.shuffle(perm, r);
            for (int j = 0; j < 128; j++) {
                lo[j] = perm.get(2 * j);
                hi[j] = perm.get(2 * j + 1);
            }
            sums = r.nextBoolean() ? 8 : 16;
            scale = r.nextBoolean() ? 1f : 32f;
        } else {
            lo = kind == 0 ? Q4_KRowLanes.PAIR_LO : Q6_KRowLanes.PAIR_LO;
            hi = kind == 0 ? Q4_KRowLanes.PAIR_HI : Q6_KRowLanes.PAIR_HI;
            sums = kind == 0 ? 8 : 16;
            scale = kind == 0 ? 1f : 32f;
        }
        int[] xr = new int[cols], xi = new int[cols / 2];
        for (int i = 0; i < cols; i++) xr[i] = r.nextInt(255) - 127;
        float[] xs = new float[blocks * sums];
        Int8RowLanes.pairs(xr, cols, lo, hi, xi, sums, scale, xs);
        int run = 256 / sums;
        for (int b = 0; b < blocks; b++) {
            for (int j = 0; j < 128; j++) {
                assertThat(xi[128 * b + j]).as("block %d pair %d", b, j).isEqualTo((xr[256 * b + lo[j]] & 0xFFFF) | xr[256 * b + hi[j]] << 16);
            }
            for (int k = 0; k < sums; k++) {
                int t = 0;
                for (int i = 256 * b + k * run; i < 256 * b + (k + 1) * run; i++) t += xr[i];
                assertThat(xs[b * sums + k]).as("block %d run %d", b, k).isEqualTo(scale * t);
            }
        }
    }

    /**
     * The 16-bit sums at their bounds: every Q4_K nibble 15 and every Q6_K value 63 (scale 127),
     * against x all +1 and all -1 (rounded to +-127): 16 products of 15 * 127 in one lane for
     * Q4_K, four of 63 * 127 for Q6_K, with nothing lost. Q4_K: d = 0.5, scales 63, dmin 0, so a
     * row is 0.5 * 63 * 15 * 256 = 120960 times x; Q6_K: d = 0.5, (63 - 32) * 127 * 256 * 0.5 =
     * 503936 times x.
     */
    @Test
    void theIntegerSumsHoldTheirExtremes() {
        int rows = L;
        byte[] q4 = new byte[rows * 144], q6 = new byte[rows * 210];
        for (int k = 0; k < rows; k++) {
            int p = k * 144;
            q4[p + 1] = 0x38;   // d = 0.5, dmin = 0
            for (int j = 0; j < 4; j++) q4[p + 4 + j] = 63;               // scales 0-3: 63, mins 0
            for (int j = 0; j < 4; j++) q4[p + 4 + j] |= (byte) 0xC0;     // scales 4-7's high bits (3 << 4 | 15 = 63)
            for (int j = 0; j < 4; j++) q4[p + 12 + j] = 0x0F;            // scales 4-7's low bits, mins 4-7 0
            for (int i = 0; i < 128; i++) q4[p + 16 + i] = (byte) 0xFF;
            int o = k * 210;
            for (int i = 0; i < 192; i++) q6[o + i] = (byte) 0xFF;       // every 6-bit value 63
            for (int s = 0; s < 16; s++) q6[o + 192 + s] = 127;
            q6[o + 209] = 0x38;
        }
        for (float sign : new float[] {1f, -1f}) {
            float[] x = ones(256);
            for (int i = 0; i < 256; i++) x[i] = sign;
            float[] o4 = product(GgmlType.Q4_K, q4, rows, 256, x), o6 = product(GgmlType.Q6_K, q6, rows, 256, x);
            for (int k = 0; k < rows; k++) {
                assertThat(o4[k]).as("Q4_K row %d, x = %s", k, sign).isEqualTo(120960f * sign);
                assertThat(o6[k]).as("Q6_K row %d, x = %s", k, sign).isEqualTo(503936f * sign);
            }
        }
    }

    /**
     * A group split between two calls (two threads' row ranges) is summed whole by each: every
     * row gets the same bits whatever the split, as {@link FloatTensor#dot} gives it.
     */
    @Property(tries = 60)
    void theSplitOfTheRowsDoesNotChangeABit(@ForAll @IntRange(min = 0, max = 2) int kind, @ForAll @IntRange(min = 0, max = 1000) int cutA,
                                            @ForAll @IntRange(min = 0, max = 1000) int cutB, @ForAll long seed) {
        GgmlType type = new GgmlType[] {GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q8_0}[kind];
        Random r = new Random(seed);
        int rows = 5 * L + 3, cols = 512;
        byte[] bytes = Reference.randomRows(type, r, rows, cols / type.blockSize);
        FloatTensor t = Tensors.view(type, MemorySegment.ofArray(bytes), rows, cols);
        float[] x = new float[cols + 3];
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
        float[] whole = new float[rows + 2], split = new float[rows + 2];
        t.matmul(0, rows, x, 3, cols, 1, whole, 2, rows);
        int a = Math.min(cutA, cutB) % (rows + 1), b = Math.max(a, Math.max(cutA, cutB) % (rows + 1));
        t.matmul(0, a, x, 3, cols, 1, split, 2, rows);
        t.matmul(a, b, x, 3, cols, 1, split, 2, rows);
        t.matmul(b, rows, x, 3, cols, 1, split, 2, rows);
        for (int row = 0; row < rows; row++) {
            assertThat(Float.floatToRawIntBits(split[2 + row])).as("%s row %d, split at %d and %d", type, row, a, b)
                    .isEqualTo(Float.floatToRawIntBits(whole[2 + row]));
            assertThat(Float.floatToRawIntBits(t.dot(row, x, 3))).as("dot of row %d", row).isEqualTo(Float.floatToRawIntBits(whole[2 + row]));
        }
        assertThat(whole[0]).isZero();
        assertThat(whole[1]).isZero();
    }

    /**
     * The prefill's panel fill from the copy ({@link RowLanes#fill}) writes a group's rows column by
     * column with the bits of the type's own dequantisation, for any group and range of blocks, and
     * leaves every other cell of the panel as it was.
     */
    @Property(tries = 40)
    void thePanelFillIsEachRowDequantisedColumnByColumn(@ForAll @IntRange(min = 0, max = 2) int kind, @ForAll @IntRange(min = 0, max = 2) int g,
                                                        @ForAll @IntRange(min = 0, max = 3) int b0, @ForAll @IntRange(min = 1, max = 4) int span,
                                                        @ForAll long seed) {
        if (!RowLanes.ENABLED) return;   // no copies: nothing fills from one
        GgmlType type = new GgmlType[] {GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q8_0}[kind];
        Random r = new Random(seed);
        // the copy's blocks: the type's own, but two of Q8_0's
        int rows = 3 * L + 5, qk = type == GgmlType.Q8_0 ? Q8_0RowLanes.QK : type.blockSize, cols = 4 * qk, from = b0 * qk, to = Math.min(4, b0 + span) * qk;
        byte[] bytes = Reference.randomRows(type, r, rows, cols / type.blockSize);
        SegmentTensor t = (SegmentTensor) Tensors.view(type, MemorySegment.ofArray(bytes), rows, cols);
        int off = 3, stride = L + 5;
        float[] w = new float[off + (to - from) * stride + 7];
        java.util.Arrays.fill(w, -7.5f);
        t.rowLanes().fill(g, from, to, w, off, stride);
        float[] row = new float[cols];
        boolean[] written = new boolean[w.length];
        for (int lane = 0; lane < L; lane++) {
            t.dequantizeRow(g * L + lane, row, 0);
            for (int k = from; k < to; k++) {
                int i = off + (k - from) * stride + lane;
                written[i] = true;
                assertThat(Float.floatToRawIntBits(w[i])).as("%s group %d row %d column %d", type, g, lane, k).isEqualTo(Float.floatToRawIntBits(row[k]));
            }
        }
        for (int i = 0; i < w.length; i++) if (!written[i]) assertThat(w[i]).as("cell %d, not the group's", i).isEqualTo(-7.5f);
    }

    @Test
    void aSwitchThatIsNeitherTrueNorFalseIsRefusedByName() {
        assertThat(FloatTensor.flag("fdkvc.rowLanes", null, true)).isTrue();
        assertThat(FloatTensor.flag("fdkvc.rowLanes", " FALSE ", true)).isFalse();
        assertThatThrownBy(() -> FloatTensor.flag("fdkvc.rowLanes", "yes", true))
                .isInstanceOf(InputException.class).hasMessageContaining("fdkvc.rowLanes").hasMessageContaining("'yes'");
    }

    private static float[] product(GgmlType type, byte[] bytes, int rows, int cols, float[] x) {
        FloatTensor t = Tensors.view(type, MemorySegment.ofArray(bytes), rows, cols);
        float[] out = new float[rows];
        t.matmul(0, rows, x, 0, cols, 1, out, 0, rows);
        return out;
    }

    private static float[] ones(int n) {
        float[] x = new float[n];
        java.util.Arrays.fill(x, 1f);
        return x;
    }
}
