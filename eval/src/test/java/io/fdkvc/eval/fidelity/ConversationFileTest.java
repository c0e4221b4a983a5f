package io.fdkvc.eval.fidelity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.chat.ChatFormat;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.template.ChatTemplate;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConversationFileTest {
    @TempDir
    Path dir;

    private Path file(String... lines) throws IOException {
        Path f = dir.resolve("c.jsonl");
        Files.write(f, List.of(lines));
        return f;
    }

    @Test
    void readsIdsTextAndProbesAndWritesThemBack() throws IOException {
        Path f = file("{\"id\": \"a\", \"turns\": [{\"ids\": [1, 5, 6]}, {\"text\": \"Hello\"}], \"probes\": [{\"turn\": 1, \"start\": 0, \"end\": 1, \"label\": \"x\"}]}",
                "",
                "{\"id\": \"b\", \"turns\": [{\"ids\": [1]}, {\"ids\": [2, 3]}]}");
        List<ConversationScript> cs = ConversationFile.read(f);
        assertThat(cs).extracting(ConversationScript::id).containsExactly("a", "b");
        assertThat(((ConversationScript.Ids) cs.get(0).turns().get(0)).ids()).containsExactly(1, 5, 6);
        assertThat(cs.get(0).probes()).containsExactly(new ConversationScript.Probe(1, 0, 1, "x"));
        Path back = dir.resolve("back.jsonl");
        ConversationFile.write(back, List.of(cs.get(1)));
        assertThat(((ConversationScript.Ids) ConversationFile.read(back).get(0).turns().get(1)).ids()).containsExactly(2, 3);
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
            "{\"id\": \"a\", \"turns\": [{\"ids\": [1, -2]}]}                    | :1: turns[0].ids[1]: must be a token id",
            "{\"id\": \"a\", \"turns\": []}                                      | :1: turns: must be a non-empty array",
            "{\"turns\": [{\"ids\": [1]}]}                                       | :1: id: must be a non-empty string",
            "{\"id\": \"a\", \"turns\": [{\"ids\": [1]}], \"probe\": []}         | :1: probe: unknown field",
            "{\"id\": \"a\", \"turns\": [{\"idz\": [1]}]}                        | :1: turns[0]: needs",
            "{\"id\": \"a\", \"turns\": [{\"ids\": [1]}, {\"role\": \"user\", \"content\": \"x\"}]} | :1: turns[1]: chat messages",
            "{\"id\": \"a\", \"turns\": [{\"role\": \"bot\", \"content\": \"x\"}]} | :1: turns[0].role: must be system, user or assistant",
            "{\"id\": \"a\", \"turns\": [{\"ids\": [1]}], \"probes\": [{\"turn\": 3, \"start\": 0, \"end\": 1}]} | :1: probes[0].turn: 3 is past",
            "{\"id\": \"a\", \"turns\": [{\"ids\": [1]}], \"probes\": [{\"turn\": 0, \"start\": 2, \"end\": 2}]} | :1: probes[0].end: must be greater",
            "{\"id\": \"a\", \"turns\": [{\"ids\": [1]}]                         | :1: malformed JSON",
    })
    void aBadLineIsOneErrorNamingLineAndField(String line, String message) throws IOException {
        Path f = file(line);
        assertThatThrownBy(() -> ConversationFile.read(f)).isInstanceOf(InputException.class).hasMessageStartingWith(f + message.trim());
    }

    @Test
    void aRepeatedIdNamesTheFirstLine() throws IOException {
        Path f = file("{\"id\": \"a\", \"turns\": [{\"ids\": [1]}]}", "{\"id\": \"a\", \"turns\": [{\"ids\": [1]}]}");
        assertThatThrownBy(() -> ConversationFile.read(f)).hasMessage(f + ":2: id: 'a' repeats the one on line 1");
    }

    @Test
    void tokenisesTextWithBosFirstAndMessagesAsChatDoes() throws IOException {
        try (LoadedModel m = GgufModelLoader.load(Path.of(System.getProperty("fdkvc.shared"), "models", "stories260K", "stories260K.gguf"))) {
            Tokenizer tok = Tokenizers.from(m.vocabulary());
            int vocab = m.config().vocabSize();
            ConversationScript text = ConversationFile.read(file(
                    "{\"id\": \"t\", \"turns\": [{\"text\": \"Once upon a time\"}, {\"text\": \"there was a cat\"}], "
                            + "\"probes\": [{\"turn\": 1, \"start\": 0, \"end\": 2}]}")).getFirst();
            TokenizedConversation tc = TokenizedConversation.of(text, tok, null, vocab, "t");
            int[] first = tok.encodeWithSpecials("Once upon a time", true), second = tok.encodeWithSpecials("there was a cat", false);
            assertThat(tc.tokens()[0]).isEqualTo(tok.bos());
            assertThat(tc.turnEnds()).containsExactly(1 + first.length, 1 + first.length + second.length);
            assertThat(tc.probes()).containsExactly(new TokenizedConversation.Span(1 + first.length, 3 + first.length, ""));

            // user, assistant, user: two dialogue turns, the first ending after the reply, tokens as ChatFormat renders them
            ConversationScript chat = ConversationFile.read(file(
                    "{\"id\": \"m\", \"turns\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello there\"}, "
                            + "{\"role\": \"user\", \"content\": \"Go on\"}]}")).getFirst();
            ChatFormat format = new ChatFormat(ChatTemplate.PLAIN, tok);
            TokenizedConversation mc = TokenizedConversation.of(chat, tok, format, vocab, "m");
            var msgs = List.of(ChatTemplate.Message.user("Hi"), ChatTemplate.Message.assistant("Hello there"), ChatTemplate.Message.user("Go on"));
            int[] a = format.extension(msgs.subList(0, 1), 0), b = format.extension(msgs.subList(0, 2), 1), c = format.extension(msgs, 2);
            assertThat(mc.turnEnds()).containsExactly(a.length + b.length, a.length + b.length + c.length);
            assertThat(mc.tokens()).startsWith(a);

            ConversationScript big = ConversationFile.read(file("{\"id\": \"x\", \"turns\": [{\"ids\": [1, 9999]}, {\"ids\": [2]}]}")).getFirst();
            assertThatThrownBy(() -> TokenizedConversation.of(big, tok, null, vocab, "F: conversation 'x'"))
                    .hasMessage("F: conversation 'x': turns[0].ids[1]: token 9999 is outside the model's vocabulary of " + vocab);
            ConversationScript one = ConversationFile.read(file("{\"id\": \"y\", \"turns\": [{\"ids\": [1, 5]}]}")).getFirst();
            assertThatThrownBy(() -> TokenizedConversation.of(one, tok, null, vocab, "y")).hasMessageContaining("at least two dialogue turns");
        }
    }
}
