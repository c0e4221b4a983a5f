package io.fdkvc.eval;

import io.fdkvc.core.InputException;
import io.fdkvc.core.Untrusted;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** Lookup of enum constants by the short id they carry on the command line and in reports. */
public final class Ids {
    private Ids() {}

    /** The ids of {@code values}, in declaration order. */
    public static <E extends Enum<E>> List<String> of(E[] values, Function<E, String> id) {
        List<String> out = new ArrayList<>(values.length);
        for (E e : values) out.add(id.apply(e));
        return out;
    }

    /**
     * The constant of {@code values} whose id is {@code name}.
     *
     * @param option the parameter (or option) the name came from, for the error message
     * @param kind   what a constant is, for the error message ({@code "dataset"}, {@code "scenario"})
     * @throws InputException {@code OPTION: unknown KIND 'NAME' (known: ID, ...)} for an unknown name
     */
    public static <E extends Enum<E>> E find(E[] values, Function<E, String> id, String name, String option, String kind) {
        for (E e : values) {
            if (id.apply(e).equals(name)) return e;
        }
        throw new io.fdkvc.core.param.ParameterException(option, "unknown " + kind + " '" + Untrusted.excerpt(String.valueOf(name)) + "' (known: " + String.join(", ", of(values, id)) + ")");
    }
}
