package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Once a mapped tensor's {@link RowLanes} copy is made, both phases read the copy, and the file's
 * pages of the tensor leave the process's memory: the weights are held once, not twice. Measured
 * by the process's resident file pages (Linux's {@code RssFile}), around the copy of an 8.9 MB
 * Q8_0 matrix mapped from a file whose every page was read first; the file's rows still read the
 * same afterwards (from the page cache).
 */
class WeightResidencyTest {
    @Test
    void theFilePagesOfACopiedTensorLeaveTheProcess(@TempDir Path dir) throws IOException {
        assumeTrue(RowLanes.ENABLED, "no row-lane copies here");
        assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "Linux's /proc/self/status");
        int rows = 64 * RowLanes.G, cols = 8192 * 16 / RowLanes.G;
        byte[] bytes = Reference.randomRows(GgmlType.Q8_0, new Random(5), rows, cols / GgmlType.Q8_0.blockSize);
        Path file = dir.resolve("q8_0.bin");
        Files.write(file, bytes);
        try (Arena arena = Arena.ofConfined(); FileChannel ch = FileChannel.open(file)) {
            MemorySegment seg = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes.length, arena);
            SegmentTensor t = (SegmentTensor) Tensors.view(GgmlType.Q8_0, seg, rows, cols);
            long sum = 0;
            for (long i = 0; i < seg.byteSize(); i += 4096) sum += seg.get(ValueLayout.JAVA_BYTE, i);
            float[] before = new float[cols], after = new float[cols];
            t.dequantizeRow(rows - 1, before, 0);
            long resident = rssFileKiB();
            t.prepareDecode();
            long left = rssFileKiB();
            assertThat(resident - left).as("KiB of file pages released (read sum %d)", sum).isGreaterThan(bytes.length * 8L / 10 / 1024);
            t.dequantizeRow(rows - 1, after, 0);
            assertThat(after).containsExactly(before);
        }
    }

    private static long rssFileKiB() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("RssFile:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        throw new IllegalStateException("no RssFile in /proc/self/status");
    }
}
