package io.fdkvc.cli.eval;

import io.fdkvc.core.InputException;
import io.fdkvc.eval.synthetic.GeneratorConfig;
import io.fdkvc.eval.synthetic.Scenario;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** The synthetic generator's options, shared by {@code eval} and {@code tune}. */
public final class GeneratorOptions {
    private static final GeneratorConfig D = GeneratorConfig.DEFAULTS;

    @Option(names = "--scenario", paramLabel = "NAME", split = ",",
            description = "scenario(s): topic-shift, gradual-drift, mixed-topics, stable-topic, topic-return (repeatable or comma-separated; default: all)")
    public List<String> scenarios; // null: not given (all); given but empty ("--scenario ,") is refused

    @Option(names = "--turns", paramLabel = "T", description = "turns per dialogue (default: " + 24 + ")")
    public int turns = D.turns();

    @Option(names = "--entries-per-turn", paramLabel = "N", description = "cache entries each turn adds (default: 16)")
    public int entriesPerTurn = D.entriesPerTurn();

    @Option(names = "--queries", paramLabel = "M", description = "query rows per turn (default: 4)")
    public int queries = D.queries();

    @Option(names = "--dim", paramLabel = "D", description = "key/value/query dimension (default: 64)")
    public int dim = D.dim();

    @Option(names = "--budget", paramLabel = "B", description = "entries a bounded policy keeps after a turn (default: 64)")
    public int budget = D.budget();

    @Option(names = "--noise", paramLabel = "SIGMA", description = "noise length relative to the unit topic vector (default: 1.0)")
    public double noise = D.noise();

    @Option(names = "--sharpness", paramLabel = "S", description = "logit of a query row for a key of the same direction (default: 4.0)")
    public double sharpness = D.sharpness();

    /** @throws io.fdkvc.core.InputException naming the option */
    public GeneratorConfig config() {
        return new GeneratorConfig(turns, entriesPerTurn, queries, dim, budget, noise, sharpness);
    }

    /** The chosen scenarios in the order given, all of them by default. */
    public List<Scenario> scenarioList() {
        if (scenarios == null) return List.of(Scenario.values());
        if (scenarios.isEmpty()) throw new InputException("--scenario: no scenario named (known: " + String.join(", ", Scenario.ids()) + ")");
        List<Scenario> out = new ArrayList<>();
        for (String s : scenarios) {
            if (s.isBlank()) throw new InputException("--scenario: an empty scenario name (known: " + String.join(", ", Scenario.ids()) + ")");
            out.add(Scenario.fromId(s.trim(), "--scenario"));
        }
        return out;
    }
}
