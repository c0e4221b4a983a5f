package io.fdkvc.bench.decode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * How fast a pass over a file's bytes reads them, mapped or copied into private memory, right
 * after another pass and after 1.5 s in which they were not touched (asleep, or reading the
 * other copy). One 64-byte load per 64 bytes, summed. The question it answers: does a mapped
 * model file read as fast as private memory once a decode has left it alone for a while?
 * usage (repository root): scripts/run-bench decode.ColdPages FILE
 */
public class ColdPages {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private static float pass(MemorySegment s) {
        FloatVector a = FloatVector.zero(F);
        long step = F.vectorByteSize(), n = s.byteSize() / step * step;
        for (long o = 0; o < n; o += step) a = a.add(FloatVector.fromMemorySegment(F, s, o, ByteOrder.LITTLE_ENDIAN));
        return a.reduceLanes(VectorOperators.ADD);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: scripts/run-bench decode.ColdPages FILE");
            System.exit(2);
        }
        MemorySegment mapped, copied;
        try (FileChannel ch = FileChannel.open(Path.of(args[0]))) {
            if (ch.size() == 0) {
                System.err.println("ColdPages: FILE " + args[0] + " is empty");
                System.exit(2);
            }
            mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), Arena.global());
            copied = Arena.global().allocate(ch.size(), 4096);
            MemorySegment.copy(mapped, 0, copied, 0, ch.size());
        } catch (java.io.IOException e) {
            System.err.println("ColdPages: cannot map FILE " + args[0] + ": "
                    + (e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.getMessage()));
            System.exit(2);
            return;
        }
        double sink = 0;
        for (int i = 0; i < 5; i++) sink += pass(mapped) + pass(copied);
        for (int round = 0; round < 2; round++) {
            for (MemorySegment m : new MemorySegment[] {mapped, copied}) {
                MemorySegment other = m == mapped ? copied : mapped;
                for (String before : new String[] {"nothing", "sleep", "other"}) {
                    for (int rep = 0; rep < 3; rep++) {
                        long t0 = System.nanoTime();
                        if (before.equals("sleep")) Thread.sleep(1500);
                        if (before.equals("other")) while (System.nanoTime() - t0 < 1_500_000_000L) sink += pass(other);
                        long t1 = System.nanoTime();
                        sink += pass(m);
                        long t2 = System.nanoTime();
                        sink += pass(m);
                        long t3 = System.nanoTime();
                        System.out.printf("%-6s after %-7s %7.1f ms, then %7.1f ms%n", m == mapped ? "mapped" : "copied", before,
                                (t2 - t1) / 1e6, (t3 - t2) / 1e6);
                    }
                }
            }
        }
        if (sink == 42) System.out.println();   // keeps the passes' results alive
    }
}
