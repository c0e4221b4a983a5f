package io.fdkvc.engine.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.engine.tensor.GgmlType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** general.file_type: llama.cpp's llama_ftype ids (llama.h), inferred from the matrices or set. */
class GgufWriterFileTypeTest {
    @TempDir
    Path dir;

    private long fileType(GgufWriter w) throws IOException {
        Path f = Files.createTempFile(dir, "ft", ".gguf");
        w.write(f);
        try (GgufFile g = GgufFile.open(f)) {
            return ((Number) g.metadata().get(GgufWriter.FILE_TYPE)).longValue();
        }
    }

    @Test
    void inferredFromTheTypeMostMatricesHave() throws IOException {
        // two Q4_K matrices outvote one Q6_K matrix; 1-D F32 norms do not count: MOSTLY_Q4_K_M = 15
        GgufWriter w = new GgufWriter().putString("general.architecture", "test")
                .addTensor("norm", GgmlType.F32, new float[256], 256)
                .addTensor("a", GgmlType.Q4_K, new float[512], 256, 2)
                .addTensor("b", GgmlType.Q6_K, new float[512], 256, 2)
                .addTensor("c", GgmlType.Q4_K, new float[512], 256, 2);
        assertThat(fileType(w)).isEqualTo(15);
        assertThat(fileType(new GgufWriter().addTensor("q", GgmlType.Q8_0, new float[64], 32, 2))).isEqualTo(7);
        assertThat(fileType(new GgufWriter().addTensor("q", GgmlType.Q5_0, new float[64], 32, 2))).isEqualTo(8);
        assertThat(fileType(new GgufWriter().addTensor("q", GgmlType.BF16, new float[4], 2, 2))).isEqualTo(32);
        assertThat(fileType(new GgufWriter().addTensor("v", GgmlType.F32, new float[4], 2, 2))).isZero();   // ALL_F32
        // no matrix, no model: no file type
        Path f = dir.resolve("v.gguf");
        new GgufWriter().addTensor("v", GgmlType.F32, new float[3], 3).write(f);
        try (GgufFile g = GgufFile.open(f)) {
            assertThat(g.metadata()).doesNotContainKey(GgufWriter.FILE_TYPE);
        }
    }

    @Test
    void anExplicitFileTypeWins() throws IOException {
        GgufWriter w = new GgufWriter().fileType(17).addTensor("a", GgmlType.Q4_K, new float[512], 256, 2);
        assertThat(fileType(w)).isEqualTo(17);
        Path f = dir.resolve("x.gguf");
        w.write(f);
        try (GgufFile g = GgufFile.open(f)) {
            assertThat(g.metadata().get(GgufWriter.FILE_TYPE)).isInstanceOf(Number.class);
            assertThat(g.metadata().keySet().stream().filter(GgufWriter.FILE_TYPE::equals).count()).isEqualTo(1);
        }
    }

    @Test
    void everyTypeHasTheIdOfItsMostlyPreset() {
        // llama.h: F16 1, Q4_0 2, Q4_1 3, Q8_0 7, Q5_0 8, Q5_1 9, Q2_K 10, Q3_K_M 12, Q4_K_M 15, Q5_K_M 17,
        // Q6_K 18, IQ4_NL 25, IQ4_XS 30, BF16 32
        assertThat(GgufWriter.fileTypeOf(GgmlType.Q4_1)).isEqualTo(3);
        assertThat(GgufWriter.fileTypeOf(GgmlType.Q5_1)).isEqualTo(9);
        assertThat(GgufWriter.fileTypeOf(GgmlType.Q2_K)).isEqualTo(10);
        assertThat(GgufWriter.fileTypeOf(GgmlType.Q3_K)).isEqualTo(12);
        assertThat(GgufWriter.fileTypeOf(GgmlType.Q6_K)).isEqualTo(18);
        assertThat(GgufWriter.fileTypeOf(GgmlType.IQ4_NL)).isEqualTo(25);
        assertThat(GgufWriter.fileTypeOf(GgmlType.IQ4_XS)).isEqualTo(30);
    }
}
