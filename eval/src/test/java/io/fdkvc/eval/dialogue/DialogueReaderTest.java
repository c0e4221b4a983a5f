package io.fdkvc.eval.dialogue;

import static io.fdkvc.eval.dialogue.Fixtures.gz;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DialogueReaderTest {
    @TempDir
    Path dir;

    static final String SGD_OK = "{'dialogue_id': 'd1', 'source': 'sgd', 'services': ['A', 'B'], 'turns': ["
            + "{'speaker': 'USER', 'utterance': 'book a table', 'service': 'A', 'services': ['A'], 'refs': []},"
            + "{'speaker': 'SYSTEM', 'utterance': 'for when?', 'service': 'A', 'services': ['A'], 'refs': []},"
            + "{'speaker': 'USER', 'utterance': 'and a taxi', 'service': 'B', 'services': ['B'], 'refs': [{'turn': 0, 'values': ['x']}, {'turn': 1, 'values': ['y']}]}]}";

    @Test
    void readsSgdTurnsServicesAndReferences() {
        Path f = gz(dir, "sgd.jsonl.gz", SGD_OK, "", SGD_OK.replace("'d1'", "'d2'"));
        List<Dialogue> ds = DialogueReader.read(Dataset.SGD, f);
        assertThat(ds).extracting(Dialogue::id).containsExactly("d1", "d2");
        Dialogue d = ds.get(0);
        assertThat(d.size()).isEqualTo(3);
        assertThat(d.turn(2).topic()).isEqualTo("B");
        assertThat(d.turn(2).speaker()).isEqualTo("USER");
        assertThat(d.turn(2).refs()).containsExactly(0, 1);
        assertThat(d.turn(0).refs()).isEmpty();
        assertThat(d.turn(1).text()).isEqualTo("for when?");
    }

    @Test
    void readsTiageShiftsAndMultiwozDomainsIncludingNull() {
        Path t = gz(dir, "t.jsonl.gz", "{'dialogue_id': '1', 'turns': [{'utterance': 'hi', 'shift': -1}, {'utterance': 'cats', 'shift': 1}, {'utterance': 'yes', 'shift': 0}]}");
        Dialogue td = DialogueReader.read(Dataset.TIAGE, t).get(0);
        assertThat(td.turns()).extracting(Utterance::shift).containsExactly(-1, 1, 0);
        assertThat(td.turn(1).topic()).isNull();

        Path m = gz(dir, "m.jsonl.gz", "{'dialogue_id': 'PMUL1', 'turns': [{'speaker': 'USER', 'domain': 'hotel', 'utterance': 'a hotel'},"
                + " {'speaker': 'SYSTEM', 'domain': null, 'utterance': 'bye'}]}");
        Dialogue md = DialogueReader.read(Dataset.MULTIWOZ, m).get(0);
        assertThat(md.turns()).extracting(Utterance::topic).containsExactly("hotel", null);
    }

    @Test
    void readsSgdNeedsAndRefusesAMentionThatIsNotEarlier() {
        String ok = "{'dialogue_id': 'n', 'turns': [{'speaker': 'USER', 'utterance': 'at 7 pm', 'service': 'S', 'refs': [], 'needs': []},"
                + " {'speaker': 'SYSTEM', 'utterance': 'sure', 'service': 'S', 'refs': [], 'needs': []},"
                + " {'speaker': 'USER', 'utterance': 'book it', 'service': 'S', 'refs': [{'turn': 1, 'values': ['7 pm']}],"
                + " 'needs': [{'value': '7 pm', 'turns': [1, 0]}]}]}";
        List<Dialogue> ds = DialogueReader.read(Dataset.SGD, Fixtures.gz(dir, "needs.jsonl.gz", ok));
        assertThat(ds.getFirst().turn(2).needs()).isDeepEqualTo(new int[][] {{1, 0}});
        assertThat(ds.getFirst().turn(0).needs()).isEmpty();
        assertThat(ds.getFirst().turn(1).bySystem()).isTrue();
        String late = ok.replace("'turns': [1, 0]", "'turns': [2]");
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, Fixtures.gz(dir, "late.jsonl.gz", late)))
                .isInstanceOf(InputException.class).hasMessageContaining("turns[2].needs[0].turns[0] = 2 is not an earlier turn");
        String order = ok.replace("'turns': [1, 0]", "'turns': [0, 1]");
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, Fixtures.gz(dir, "order.jsonl.gz", order)))
                .isInstanceOf(InputException.class).hasMessageContaining("most recent first");
    }

    @Test
    void aMalformedLineIsReportedWithFileAndLine() {
        Path f = gz(dir, "bad.jsonl.gz", SGD_OK, SGD_OK.replace("'d1'", "'d2'"), "{'dialogue_id': 'd3', 'turns': [");
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, f))
                .isInstanceOf(InputException.class).hasMessageStartingWith(f + ":3: malformed JSON");
    }

    @Test
    void aReferenceToALaterTurnIsRefusedNamingTheField() {
        Path f = gz(dir, "ref.jsonl.gz", SGD_OK.replace("{'turn': 1,", "{'turn': 2,"));
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, f)).isInstanceOf(InputException.class)
                .hasMessage(f + ":1: turns[2].refs[1].turn = 2 is not an earlier turn of turn 2");
    }

    @Test
    void missingAndIllTypedFieldsAreNamed() {
        Path noService = gz(dir, "a.jsonl.gz", SGD_OK.replace("'service': 'B', ", ""));
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, noService)).hasMessage(noService + ":1: turns[2].service: expected a string");
        Path badSpeaker = gz(dir, "b.jsonl.gz", SGD_OK.replace("'SYSTEM'", "'BOT'"));
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, badSpeaker)).hasMessageContaining(":1: turns[1].speaker = 'BOT'");
        Path blank = gz(dir, "c.jsonl.gz", SGD_OK.replace("'for when?'", "'  '"));
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, blank)).hasMessage(blank + ":1: turns[1].utterance is blank");
        Path badShift = gz(dir, "d.jsonl.gz", "{'dialogue_id': '1', 'turns': [{'utterance': 'hi', 'shift': 0}]}");
        assertThatThrownBy(() -> DialogueReader.read(Dataset.TIAGE, badShift)).hasMessageContaining(":1: turns[0].shift = 0");
        Path noDomain = gz(dir, "e.jsonl.gz", "{'dialogue_id': 'x', 'turns': [{'speaker': 'USER', 'utterance': 'hi'}]}");
        assertThatThrownBy(() -> DialogueReader.read(Dataset.MULTIWOZ, noDomain)).hasMessageContaining(":1: turns[0].domain: missing");
        Path noTurns = gz(dir, "f.jsonl.gz", "{'dialogue_id': 'x', 'turns': []}");
        assertThatThrownBy(() -> DialogueReader.read(Dataset.MULTIWOZ, noTurns)).hasMessageContaining(":1: turns: a dialogue needs at least one turn");
    }

    @Test
    void duplicateIdsMissingFilesNonGzipAndEmptyFilesAreRefused() throws Exception {
        Path dup = gz(dir, "dup.jsonl.gz", SGD_OK, SGD_OK);
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, dup)).hasMessage(dup + ":2: dialogue_id 'd1' repeats the one on line 1");
        Path missing = dir.resolve("nope.jsonl.gz");
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, missing)).isInstanceOf(InputException.class).hasMessage("--data: no such file: " + missing);
        Path plain = Files.writeString(dir.resolve("plain.jsonl.gz"), SGD_OK);
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, plain)).isInstanceOf(InputException.class).hasMessageContaining("not a gzip file");
        Path empty = gz(dir, "empty.jsonl.gz", "");
        assertThatThrownBy(() -> DialogueReader.read(Dataset.SGD, empty)).hasMessage(empty + ": holds no dialogue");
    }

    @Test
    void unknownDatasetNamesTheOption() {
        assertThatThrownBy(() -> Dataset.parse("dstc")).isInstanceOf(InputException.class)
                .hasMessage("--dataset: unknown dataset 'dstc' (known: sgd, tiage, multiwoz)");
        assertThat(Dataset.parse("multiwoz")).isEqualTo(Dataset.MULTIWOZ);
    }
}
