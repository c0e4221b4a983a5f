package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each weight type's tensor classes initialise whichever comes first in a JVM. The tensor classes
 * read each other's constants while they initialise (FloatTensor, its subclasses, the row-lane
 * copies), and a cycle among them leaves a constant unset only for the order that closes it: a
 * test JVM whose earlier tests touched FloatTensor first does not see it, so each type runs in a
 * fresh JVM ({@link FirstTensorMain}).
 */
class ClassInitialisationTest {
    @ParameterizedTest
    @EnumSource(GgmlType.class)
    void aTypesTensorIsTheFirstThingAFreshJvmMakes(GgmlType type) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), FirstTensorMain.class.getName(), type.name())
                .redirectErrorStream(true).start();
        boolean ended = p.waitFor(60, TimeUnit.SECONDS);
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!ended) p.destroyForcibly();
        assertThat(ended).as("%s: the JVM ended within 60 s", type).isTrue();
        assertThat(p.exitValue()).as("%s, the JVM's output:%n%s", type, output).isZero();
        assertThat(output.strip().lines().reduce((a, b) -> b).orElse("")).as("%s: the product of zeros", type).isEqualTo("0.0");
    }
}
