package io.fdkvc.engine.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.LoadedModel;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class WeightMemoryTest {
    private static final Path STORIES = GgufModelLoaderTest.shared().resolve("models/stories260K/stories260K.gguf");

    /** A copied file holds the mapped file's bytes, tensor by tensor, and runs the same model. */
    @Test
    void copiedTensorsAreTheMappedBytes() {
        try (GgufFile mapped = GgufFile.open(STORIES, WeightMemory.MAPPED); GgufFile copied = GgufFile.open(STORIES, WeightMemory.COPIED)) {
            assertThat(copied.tensorInfos().keySet()).isEqualTo(mapped.tensorInfos().keySet()).isNotEmpty();
            assertThat(copied.metadata()).usingRecursiveComparison().isEqualTo(mapped.metadata());
            for (String name : mapped.tensorInfos().keySet()) {
                MemorySegment a = mapped.tensorData(name), b = copied.tensorData(name);
                assertThat(b.byteSize()).as(name).isEqualTo(a.byteSize());
                assertThat(a.mismatch(b)).as(name).isEqualTo(-1L);
                // read only, as the mapping is
                assertThat(b.isReadOnly()).as(name).isTrue();
            }
        }
    }

    /** The copy is the file's bytes, page-aligned where the platform maps anonymous memory (Linux). */
    @Test
    void copyIsPageAligned() throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(STORIES); var arena = java.lang.foreign.Arena.ofConfined()) {
            long n = ch.size();
            MemorySegment s = WeightMemory.copy(ch, n, arena);
            assertThat(s.byteSize()).isEqualTo(n);
            if (System.getProperty("os.name").toLowerCase().contains("linux")) assertThat(s.address() % 4096).isZero();
            // the GGUF magic, read from the copy
            assertThat(s.get(ValueLayout.JAVA_INT_UNALIGNED, 0)).isEqualTo(0x46554747);
        }
    }

    /**
     * A copy the system cannot hold (1 PiB: beyond a 48-bit address space, so refused whatever the
     * overcommit setting) is bad input naming the property and the size, not an error of the JVM.
     */
    @Test
    void aCopyTooLargeForTheMachineIsRefusedNamingTheProperty() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"));
        try (var ch = java.nio.channels.FileChannel.open(STORIES); var arena = java.lang.foreign.Arena.ofConfined()) {
            assertThatThrownBy(() -> WeightMemory.copy(ch, 1L << 50, arena)).isInstanceOf(InputException.class)
                    .hasMessageContaining("fdkvc.weights=copied").hasMessageContaining("1073741824 MiB");
        }
    }

    @Test
    void copiedModelGeneratesAsTheMappedOne() {
        try (LoadedModel a = GgufModelLoader.load(GgufFile.open(STORIES, WeightMemory.MAPPED));
             LoadedModel b = GgufModelLoader.load(GgufFile.open(STORIES, WeightMemory.COPIED))) {
            float[] x = new float[a.config().dim()];
            for (int i = 0; i < x.length; i++) x[i] = (float) Math.sin(i);
            var wa = a.weights().wq()[0];
            var wb = b.weights().wq()[0];
            for (int r = 0; r < wa.rows(); r++) assertThat(Float.floatToIntBits(wb.dot(r, x, 0))).isEqualTo(Float.floatToIntBits(wa.dot(r, x, 0)));
        }
    }

    @Test
    void propertyValues() {
        assertThat(WeightMemory.parse(null)).isEqualTo(WeightMemory.MAPPED);
        assertThat(WeightMemory.parse("mapped")).isEqualTo(WeightMemory.MAPPED);
        assertThat(WeightMemory.parse(" Copied ")).isEqualTo(WeightMemory.COPIED);
        assertThatThrownBy(() -> WeightMemory.parse("mmap")).isInstanceOf(InputException.class)
                .hasMessageContaining("fdkvc.weights").hasMessageContaining("'mmap'");
        assertThatThrownBy(() -> WeightMemory.parse("")).isInstanceOf(InputException.class);
    }
}
