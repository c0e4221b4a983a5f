package io.fdkvc.eval.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportDirectoryTest {
    @TempDir
    Path tmp;

    @Test
    void aSuccessfulWriteLeavesExactlyTheReport() throws IOException {
        Path out = tmp.resolve("a/b/report");
        ReportDirectory.write(out, "--out", dir -> Files.writeString(dir.resolve("x.txt"), "x"));
        assertThat(Files.readString(out.resolve("x.txt"))).isEqualTo("x");
        try (Stream<Path> s = Files.list(out.getParent())) {
            assertThat(s.toList()).containsExactly(out); // no temporary left beside it
        }
    }

    @Test
    void aFailedWriteLeavesNothingBehind() throws IOException {
        Path out = tmp.resolve("new/report");
        assertThatThrownBy(() -> ReportDirectory.write(out, "--out", dir -> {
            Files.writeString(dir.resolve("half.txt"), "half");
            throw new IllegalStateException("boom");
        })).hasMessage("boom");
        assertThat(out).doesNotExist();
        assertThat(tmp.resolve("new")).doesNotExist(); // the parent it created is gone too
        try (Stream<Path> s = Files.list(tmp)) {
            assertThat(s.toList()).isEmpty();
        }
    }

    @Test
    void anExistingNonEmptyDirectoryOrAFileIsRefused() throws IOException {
        Path full = Files.createDirectories(tmp.resolve("full"));
        Files.writeString(full.resolve("keep.txt"), "keep");
        assertThatThrownBy(() -> ReportDirectory.check(full, "--out")).isInstanceOf(InputException.class)
                .hasMessageStartingWith("--out: ").hasMessageContaining("not empty");
        Path file = Files.writeString(tmp.resolve("f"), "f");
        assertThatThrownBy(() -> ReportDirectory.check(file, "--out")).hasMessageContaining("not a directory");
        assertThatThrownBy(() -> ReportDirectory.check(file.resolve("sub"), "--out")).hasMessageContaining("not a directory");
        assertThat(Files.readString(full.resolve("keep.txt"))).isEqualTo("keep");
    }

    @Test
    void anEmptyDirectoryIsReplaced() throws IOException {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        ReportDirectory.write(empty, "--out", dir -> Files.writeString(dir.resolve("r.md"), "r"));
        assertThat(empty.resolve("r.md")).exists();
    }
}
