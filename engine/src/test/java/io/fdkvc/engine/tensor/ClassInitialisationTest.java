package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.List;
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
        ChildJvm jvm = ChildJvm.run(60, List.of(), FirstTensorMain.class, type.name());
        String output = jvm.output();
        assertThat(jvm.exitValue()).as("%s, the JVM's output:%n%s", type, output).isZero();
        assertThat(output.strip().lines().reduce((a, b) -> b).orElse("")).as("%s: the product of zeros", type).isEqualTo("0.0");
    }
}
