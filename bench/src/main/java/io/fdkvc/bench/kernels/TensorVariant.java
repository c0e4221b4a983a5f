package io.fdkvc.bench.kernels;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * A weight matrix of one build of {@code io.fdkvc.engine.tensor}, for A/B comparisons of two
 * builds in one JVM: the build's compiled classes (a directory, e.g. an older commit's package
 * compiled by hand, see {@link DotAB}) are loaded in their own class loader ahead of the engine's,
 * so each build's kernels are separate classes that the JIT compiles separately. An empty
 * directory name means the engine on the class path. The matrix is Gaussian values quantised
 * by that build's own quantiser, the same values for every build (seeded).
 */
public final class TensorVariant {
    /** {@code FloatTensor.matmul(rowFrom, rowTo, x, xOff, xStride, batch, out, outOff, outStride)}, bound to the matrix. */
    public final MethodHandle matmul;

    private TensorVariant(MethodHandle matmul) {
        this.matmul = matmul;
    }

    private static final MethodType MATMUL = MethodType.methodType(void.class, int.class, int.class, float[].class, int.class,
            int.class, int.class, float[].class, int.class, int.class);

    /** A rows x cols matrix of {@code type} (a GgmlType name) from the build in {@code classes}. */
    public static TensorVariant of(String classes, String type, int rows, int cols, long seed) {
        try {
            ClassLoader cl = classes.isEmpty() ? TensorVariant.class.getClassLoader() : loader(classes);
            Class<?> gt = cl.loadClass("io.fdkvc.engine.tensor.GgmlType");
            Object t = gt.getMethod("valueOf", String.class).invoke(null, type);
            float[] w = RandomTensor.gaussian(rows * cols, new Random(seed));
            byte[] q = (byte[]) cl.loadClass("io.fdkvc.engine.tensor.Quantizer").getMethod("quantize", gt, float[].class).invoke(null, t, w);
            MemorySegment seg = Arena.global().allocate(q.length, 64);
            MemorySegment.copy(MemorySegment.ofArray(q), 0, seg, 0, q.length);
            Object tensor = cl.loadClass("io.fdkvc.engine.tensor.Tensors").getMethod("view", gt, MemorySegment.class, int.class, int.class)
                    .invoke(null, t, seg, rows, cols);
            Class<?> ft = cl.loadClass("io.fdkvc.engine.tensor.FloatTensor");
            return new TensorVariant(MethodHandles.publicLookup().findVirtual(ft, "matmul", MATMUL).bindTo(tensor));
        } catch (ReflectiveOperationException | MalformedURLException e) {
            throw new IllegalArgumentException("cannot load the tensor classes of " + (classes.isEmpty() ? "the class path" : classes) + ": " + e, e);
        }
    }

    /** The classes in {@code dir} first, then the engine's and core's (build output or the benchmark jar). */
    private static ClassLoader loader(String dir) throws MalformedURLException {
        Path p = Path.of(dir);
        if (!Files.isDirectory(p.resolve("io/fdkvc/engine/tensor"))) throw new IllegalArgumentException(dir + " holds no io/fdkvc/engine/tensor classes");
        return new URLClassLoader(new URL[] {p.toUri().toURL()}, TensorVariant.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                // the tensor package from dir even though the parent has it too: child first
                if (!name.startsWith("io.fdkvc.engine.tensor.")) return super.loadClass(name, resolve);
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c == null) {
                        try {
                            c = findClass(name);
                        } catch (ClassNotFoundException e) {
                            c = super.loadClass(name, false);
                        }
                    }
                    if (resolve) resolveClass(c);
                    return c;
                }
            }
        };
    }
}
