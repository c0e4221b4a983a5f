package io.fdkvc.cli.eval;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.cli.Main;
import io.fdkvc.eval.report.ResultsCsv;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class EvalCommandTest {
    @TempDir
    Path tmp;

    record Run(int status, String out, String err) {}

    static Run fdkvc(String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        int status = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(status, out.toString(), err.toString());
    }

    /** A tiny configuration: few dialogues and turns, so that the end-to-end test is quick. */
    static final String[] TINY = {"--dialogues", "4", "--turns", "6", "--threads", "2"};

    static String[] concat(String[] a, String... b) {
        List<String> l = new ArrayList<>(List.of(a));
        l.addAll(List.of(b));
        return l.toArray(String[]::new);
    }

    @Test
    void aTinyRunWritesEveryFileAndPrintsTheTable() throws IOException {
        Path out = tmp.resolve("report");
        Run r = fdkvc(concat(concat(new String[]{"eval"}, TINY), "--out", out.toString()));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("late_turn_alignment").contains("fdkvc").contains("h2o-paper")
                .contains("The paper's claims").contains("report: " + out.resolve("report.md"));
        assertThat(r.err()).contains("100% 20/20 dialogues"); // the line-based progress bar
        for (String f : List.of("report.md", "results.csv", "results.json", "summary.png", "alignment-topic-shift.png",
                "composition-mixed-topics.png", "adaptation-topic-return.png", "alignment-stable-topic.png")) {
            assertThat(out.resolve(f)).as(f).isNotEmptyFile();
        }
        assertThat(out.resolve("adaptation-stable-topic.png")).doesNotExist(); // no topic change to adapt to
        List<String> csv = Files.readAllLines(out.resolve("results.csv"));
        assertThat(csv.getFirst()).isEqualTo(ResultsCsv.HEADER).isEqualTo("scenario,policy,metric,mean,ci_low,ci_high,n");
        assertThat(csv).anyMatch(l -> l.startsWith("composite,fdkvc,alignment_improvement_vs_h2o,"));
        assertThat(csv).anyMatch(l -> l.startsWith("topic-shift,fdkvc,adaptation_speedup_vs_h2o-paper,"));
        for (String line : csv.subList(1, csv.size())) assertThat(line.split(",")).hasSize(7);
        JsonNode json = JsonMapper.builder().build().readTree(Files.readString(out.resolve("results.json")));
        assertThat(json.get("config").get("dialogues").asInt()).isEqualTo(4);
        assertThat(json.get("results").size()).isEqualTo(csv.size() - 1);
        assertThat(json.get("curves").get("topic-shift").get("fdkvc").get("alignment_by_turn").size()).isEqualTo(6);
        String md = Files.readString(out.resolve("report.md"));
        assertThat(md).contains("## The paper's claims and ours").contains("![").contains("alignment-topic-shift.png")
                .contains("Run time:").contains("fdkvc eval --dialogues 4");
        try (Stream<Path> s = Files.list(tmp)) {
            assertThat(s.toList()).containsExactly(out); // no temporary directory left
        }
    }

    @Test
    void theSameSeedGivesTheSameResultsWhateverTheThreads() throws IOException {
        Path a = tmp.resolve("a"), b = tmp.resolve("b");
        assertThat(fdkvc("eval", "--dialogues", "3", "--turns", "5", "--scenario", "topic-shift,mixed-topics", "--policy", "fdkvc,h2o",
                "--threads", "1", "--quiet", "--out", a.toString()).status()).isZero();
        assertThat(fdkvc("eval", "--dialogues", "3", "--turns", "5", "--scenario", "topic-shift", "--scenario", "mixed-topics",
                "--policy", "fdkvc", "--policy", "h2o", "--threads", "2", "--quiet", "--out", b.toString()).status()).isZero();
        assertThat(Files.readString(b.resolve("results.csv"))).isEqualTo(Files.readString(a.resolve("results.csv")));
    }

    @Test
    void policyParametersReachFdkvc() throws IOException {
        Path a = tmp.resolve("a");
        Run r = fdkvc("eval", "--dialogues", "2", "--turns", "4", "--scenario", "topic-shift", "--policy", "fdkvc,fdkvc-no-decay",
                "-p", "gamma=0.6", "--fdkvc-defaults", "spec", "--quiet", "--out", a.toString());
        assertThat(r.status()).as(r.err()).isZero();
        JsonNode pol = JsonMapper.builder().build().readTree(Files.readString(a.resolve("results.json"))).get("config").get("policies");
        assertThat(pol.get("fdkvc").get("gamma").asString()).isEqualTo("0.6");
        assertThat(pol.get("fdkvc-no-decay").get("gamma").asString()).isEqualTo("1.0"); // pinned by the ablation
        assertThat(pol.get("fdkvc").get("alpha0").asString()).isEqualTo("0.5"); // the spec's default
    }

    static Stream<List<String>> badOptions() {
        return Stream.of(
                List.of("--dialogues", "0", "--dialogues"),
                List.of("--turns", "2", "--turns"),
                List.of("--entries-per-turn", "0", "--entries-per-turn"),
                List.of("--queries", "0", "--queries"),
                List.of("--dim", "1", "--dim"),
                List.of("--dim", "abc", "--dim"),
                List.of("--budget", "0", "--budget"),
                List.of("--noise", "-1", "--noise"),
                List.of("--noise", "NaN", "--noise"),
                List.of("--sharpness", "0", "--sharpness"),
                List.of("--threads", "0", "--threads"),
                List.of("--scenario", "nope", "--scenario"),
                List.of("--policy", "nope", "--policy"),
                List.of("-p", "gamma=2", "-p gamma"),
                List.of("-p", "zeta=1", "-p zeta"),
                List.of("--fdkvc-defaults", "best", "--fdkvc-defaults"),
                List.of("--dataset", "nope", "--dataset"),
                List.of("--data", "x.jsonl", "--data"),
                List.of("--budget-tokens", "10", "--budget-tokens"));
    }

    @ParameterizedTest
    @MethodSource("badOptions")
    void badOptionsExitTwoWithOneLineNamingTheOptionAndNoReport(List<String> bad) {
        Path out = tmp.resolve("never");
        List<String> args = new ArrayList<>(List.of("eval", "--dialogues", "2", "--turns", "4", "--out", out.toString()));
        args.addAll(bad.subList(0, 2));
        Run r = fdkvc(args.toArray(String[]::new));
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).contains(bad.get(2));
        assertThat(r.err().lines().filter(l -> !l.startsWith("Try ")).count()).isEqualTo(1);
        assertThat(out).doesNotExist();
    }

    @Test
    void anExistingNonEmptyOutIsRefusedAndLeftAlone() throws IOException {
        Path out = Files.createDirectories(tmp.resolve("taken"));
        Files.writeString(out.resolve("mine.txt"), "mine");
        Run r = fdkvc("eval", "--dialogues", "2", "--turns", "4", "--out", out.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).startsWith("fdkvc eval: --out: ");
        try (Stream<Path> s = Files.list(out)) {
            assertThat(s.toList()).containsExactly(out.resolve("mine.txt"));
        }
    }

    @Test
    void datasetRefusesSyntheticOptionsAndAMissingFile() {
        Run r = fdkvc("eval", "--dataset", "sgd", "--data", tmp.resolve("none.jsonl.gz").toString(), "--turns", "5", "--out", tmp.resolve("x").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--turns: only for the synthetic benchmark");
        r = fdkvc("eval", "--dataset", "sgd", "--data", tmp.resolve("none.jsonl.gz").toString(), "--out", tmp.resolve("x").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--data");
        r = fdkvc("eval", "--dataset", "tiage", "--out", tmp.resolve("x").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--data");
        assertThat(tmp.resolve("x")).doesNotExist();
    }

    /** --dataset hands over to the real-dialogue evaluation and writes its report atomically. */
    @Test
    void aDatasetRunWritesTheDialogueReport() throws IOException {
        Path data = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "data", "dialogues", "tiage-dev.jsonl.gz");
        assertThat(data).as("the shared TIAGE data (../shared/data/dialogues), which CI always has").isRegularFile();
        Path out = tmp.resolve("tiage");
        Run r = fdkvc("eval", "--dataset", "tiage", "--data", data.toString(), "--dialogues", "3", "--policy", "fdkvc,h2o,window",
                "--quiet", "--out", out.toString());
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("report: " + out.resolve("report.md"));
        assertThat(Files.readString(out.resolve("report.md"))).startsWith("# FD-KVC evaluation report: tiage").contains("--dialogues 3");
        List<String> csv = Files.readAllLines(out.resolve("results.csv"));
        assertThat(csv.getFirst()).isEqualTo(ResultsCsv.HEADER);
        assertThat(csv).anyMatch(l -> l.startsWith("tiage,"));
        assertThat(JsonMapper.builder().build().readTree(Files.readString(out.resolve("results.json"))).get("results").size())
                .isEqualTo(csv.size() - 1);
        try (Stream<Path> s = Files.list(tmp)) {
            assertThat(s.toList()).containsExactly(out);
        }
        Run bad = fdkvc("eval", "--dataset", "tiage", "--data", data.toString(), "--dialogues", "0", "--out", tmp.resolve("b").toString());
        assertThat(bad.status()).isEqualTo(2);
        assertThat(bad.err()).contains("--dialogues");
        assertThat(tmp.resolve("b")).doesNotExist();
    }

    @Test
    void tuneRunsOnTuningSeedsAndRefusesTheEvaluationSeed() throws IOException {
        Path out = tmp.resolve("tune");
        Run r = fdkvc("tune", "--dialogues", "2", "--turns", "5", "--scenario", "topic-shift", "--passes", "1", "--quiet", "--out", out.toString());
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("**chosen**").contains("| gamma |").contains("| beta |");
        assertThat(out.resolve("tune.md")).isNotEmptyFile();
        assertThat(out.resolve("sensitivity-gamma.png")).isNotEmptyFile();
        assertThat(Files.readAllLines(out.resolve("sensitivity.csv")).getFirst()).isEqualTo("parameter,value,late_turn_alignment,adaptation_turns,topic_diversity");
        Run bad = fdkvc("tune", "--seed", "1", "--dialogues", "2", "--turns", "4");
        assertThat(bad.status()).isEqualTo(2);
        assertThat(bad.err()).contains("--seed: 1 is the evaluation's seed");
    }

    /** tune --dataset: the fdkvc-dialogue grid on real dialogues; a bad axis is named. */
    @Test
    void tuneOnADatasetSearchesTheDialogueGrid() {
        Path data = Path.of(System.getProperty("fdkvc.shared", "../../shared"), "data", "dialogues", "tiage-train.jsonl.gz");
        assertThat(data).as("the shared TIAGE data (../shared/data/dialogues), which CI always has").isRegularFile();
        Run r = fdkvc("tune", "--dataset", "tiage", "--data", data.toString(), "--dialogues", "4", "--grid", "recent=0.25",
                "--grid", "gamma=0.85", "--grid", "wc=0", "--grid", "wrho=1", "--grid", "wnovel=0,3", "--grid", "wspeaker=0", "--grid", "nfloor=1", "--quiet");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("# Tuning fdkvc-dialogue on tiage-train.jsonl.gz: 4 dialogues")
                .contains("| (window) |").contains("| (lc4j-token-window) |").contains("fdkvc-dialogue[recent=0.25 gamma=0.85 wc=0.0 wrho=1.0 wnovel=3.0 wspeaker=0.0 nfloor=1.0]")
                .contains("Best: `{");
        Run bad = fdkvc("tune", "--dataset", "tiage", "--data", data.toString(), "--grid", "lambda=1");
        assertThat(bad.status()).isEqualTo(2);
        assertThat(bad.err()).contains("--grid lambda: not a parameter of fdkvc-dialogue");
        Run badValue = fdkvc("tune", "--dataset", "tiage", "--data", data.toString(), "--grid", "recent=2");
        assertThat(badValue.status()).isEqualTo(2);
        assertThat(badValue.err()).contains("recent");
        Run synthetic = fdkvc("eval", "--no-packing", "--dialogues", "2");
        assertThat(synthetic.status()).isEqualTo(2);
        assertThat(synthetic.err()).contains("--no-packing: only used with --dataset");
    }
}
