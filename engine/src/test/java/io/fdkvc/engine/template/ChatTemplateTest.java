package io.fdkvc.engine.template;

import io.fdkvc.engine.tokenizer.TokenDecoder;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.engine.tokenizer.Vocabulary;
import io.fdkvc.engine.tokenizer.TestVocabularies;

import io.fdkvc.core.InputException;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.engine.template.ChatTemplate.Message;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChatTemplateTest {
    private static final List<Message> CONVERSATION = List.of(
            Message.system("You are terse."), Message.user("Hi"), Message.assistant("Hello!"), Message.user("Bye"));

    @Test
    void chatml() {
        assertThat(ChatTemplate.CHATML.render(CONVERSATION, true)).isEqualTo(
                "<|im_start|>system\nYou are terse.<|im_end|>\n"
                        + "<|im_start|>user\nHi<|im_end|>\n"
                        + "<|im_start|>assistant\nHello!<|im_end|>\n"
                        + "<|im_start|>user\nBye<|im_end|>\n"
                        + "<|im_start|>assistant\n");
        assertThat(ChatTemplate.CHATML.firstTurn(null, "Hi")).isEqualTo("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
        assertThat(ChatTemplate.CHATML.nextTurn("Bye"))
                .isEqualTo("<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n");
        assertThat(ChatTemplate.CHATML.addBos()).isFalse();
    }

    @Test
    void llama3() {
        assertThat(ChatTemplate.LLAMA3.render(CONVERSATION, true)).isEqualTo(
                "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
                        + "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                        + "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
                        + "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
                        + "<|start_header_id|>assistant<|end_header_id|>\n\n");
        // Meta's template trims contents
        assertThat(ChatTemplate.LLAMA3.firstTurn(null, "  Hi \n")).isEqualTo(
                "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        assertThat(ChatTemplate.LLAMA3.addBos()).isTrue();
    }

    @Test
    void llama2() {
        assertThat(ChatTemplate.LLAMA2.render(CONVERSATION, true)).isEqualTo(
                "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] Bye [/INST]");
        assertThat(ChatTemplate.LLAMA2.firstTurn(null, "Hi")).isEqualTo("[INST] Hi [/INST]");
        assertThat(ChatTemplate.LLAMA2.firstTurn("Sys", "Hi")).isEqualTo("[INST] <<SYS>>\nSys\n<</SYS>>\n\nHi [/INST]");
        assertThat(ChatTemplate.LLAMA2.nextTurn("Bye")).isEqualTo(" </s><s>[INST] Bye [/INST]");
        // ending with the reply: closed by EOS
        assertThat(ChatTemplate.LLAMA2.render(List.of(Message.user("Hi"), Message.assistant("Hello!")), false))
                .isEqualTo("[INST] Hi [/INST] Hello! </s>");
    }

    @Test
    void plain() {
        assertThat(ChatTemplate.PLAIN.render(CONVERSATION, true))
                .isEqualTo("You are terse.\n\nUser: Hi\nAssistant: Hello!\nUser: Bye\nAssistant:");
        assertThat(ChatTemplate.PLAIN.firstTurn(null, "Hi")).isEqualTo("User: Hi\nAssistant:");
        assertThat(ChatTemplate.PLAIN.nextTurn("Bye")).isEqualTo("\nUser: Bye\nAssistant:");
        assertThat(ChatTemplate.PLAIN.stopStrings()).containsExactly("\nUser:");
    }

    /** Appending turns to a context gives the same text as rendering the whole conversation. */
    @Property(tries = 200)
    void incrementalTurnsEqualTheFullRendering(@ForAll("template") BuiltinTemplate t, @ForAll("content") String system,
                                              @ForAll("turns") List<String> turns, @ForAll boolean withSystem) {
        List<Message> messages = new ArrayList<>();
        if (withSystem) {
            messages.add(Message.system(system));
        }
        StringBuilder incremental = new StringBuilder(t.firstTurn(withSystem ? system : null, turns.getFirst()));
        messages.add(Message.user(turns.getFirst()));
        for (int i = 1; i + 1 < turns.size(); i += 2) {
            String reply = turns.get(i);
            String user = turns.get(i + 1);
            incremental.append(t.assistantText(reply)).append(t.nextTurn(user));
            messages.add(Message.assistant(reply));
            messages.add(Message.user(user));
        }
        assertThat(incremental.toString()).isEqualTo(t.render(messages, true));
    }

    @Provide
    Arbitrary<BuiltinTemplate> template() {
        return Arbitraries.of(BuiltinTemplate.class);
    }

    @Provide
    Arbitrary<String> content() {
        return Arbitraries.strings().withCharRange('a', 'z').withChars(' ', '\n', '!', 'é').ofMinLength(1).ofMaxLength(20)
                .map(String::strip).filter(s -> !s.isEmpty());
    }

    @Provide
    Arbitrary<List<String>> turns() {
        return content().list().ofMinSize(1).ofMaxSize(7).filter(l -> l.size() % 2 == 1);
    }

    @Test
    void detectsTheFormatFromTheJinjaTemplate() {
        String qwen = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
                + " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
        String llama3 = "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content ="
                + " '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}";
        String llama2 = "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
                + "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}";
        String gemma = "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}";
        Vocabulary stories = TestVocabularies.tok512();
        assertThat(ChatTemplate.detect(qwen, stories)).isEqualTo(ChatTemplate.CHATML);
        assertThat(ChatTemplate.detect(llama3, stories)).isEqualTo(ChatTemplate.LLAMA3);
        assertThat(ChatTemplate.detect(llama2, stories)).isEqualTo(ChatTemplate.LLAMA2);
        assertThat(ChatTemplate.detect(gemma, stories)).isEqualTo(ChatTemplate.PLAIN);
        assertThat(ChatTemplate.detect(null, stories)).isEqualTo(ChatTemplate.PLAIN);
        assertThat(ChatTemplate.detect(null, null)).isEqualTo(ChatTemplate.PLAIN);
        // no template: the vocabulary's marker tokens decide
        Vocabulary chatml = TestVocabularies.byteLevel("qwen2", List.of("<|im_start|>"), new int[] {3}, List.of(), -1, -1);
        Vocabulary meta = TestVocabularies.byteLevel("llama-bpe", List.of("<|start_header_id|>"), new int[] {3}, List.of(), -1, -1);
        assertThat(ChatTemplate.detect(null, chatml)).isEqualTo(ChatTemplate.CHATML);
        assertThat(ChatTemplate.detect(null, meta)).isEqualTo(ChatTemplate.LLAMA3);
        // a null argument falls back to the vocabulary's own template
        Vocabulary withTemplate = new Vocabulary("llama", null, stories.tokens(), stories.scores(), null, null, 1, 2, llama2);
        assertThat(ChatTemplate.detect(null, withTemplate)).isEqualTo(ChatTemplate.LLAMA2);
    }

    @Test
    void byNameForTheTemplateOption() {
        assertThat(ChatTemplate.byName("chatml")).isEqualTo(ChatTemplate.CHATML);
        assertThat(ChatTemplate.byName(" Llama3 ")).isEqualTo(ChatTemplate.LLAMA3);
        assertThat(ChatTemplate.byName("llama2")).isEqualTo(ChatTemplate.LLAMA2);
        assertThat(ChatTemplate.byName("PLAIN")).isEqualTo(ChatTemplate.PLAIN);
        for (ChatTemplate t : BuiltinTemplate.values()) {
            assertThat(ChatTemplate.byName(t.id())).isEqualTo(t);
        }
        assertThatThrownBy(() -> ChatTemplate.byName("zephyr"))
                .isInstanceOf(InputException.class)
                .isInstanceOf(ParameterException.class)
                .hasMessageStartingWith("template: ").hasMessageContaining("'zephyr'").hasMessageContaining("chatml");
        assertThatThrownBy(() -> ChatTemplate.byName(null)).isInstanceOf(ParameterException.class);
    }

    @Test
    void stopTokensAreEosAndTheEndMarkersTheVocabularyHas() {
        // 256 <|im_end|>, 257 <|endoftext|>, 258 <|eot_id|>; eos = 257
        Tokenizer t = Tokenizers.from(TestVocabularies.byteLevel("qwen2", List.of("<|im_end|>", "<|endoftext|>", "<|eot_id|>"),
                new int[] {3, 3, 3}, List.of(), -1, 257));
        assertThat(ChatTemplate.CHATML.stopTokens(t)).containsExactly(257, 256);
        assertThat(ChatTemplate.LLAMA3.stopTokens(t)).containsExactly(257, 258);
        assertThat(ChatTemplate.LLAMA2.stopTokens(t)).containsExactly(257);
        // stories260K: EOS and, for a base model, BOS
        Tokenizer stories = Tokenizers.from(TestVocabularies.tok512());
        assertThat(ChatTemplate.PLAIN.stopTokens(stories)).containsExactly(2, 1);
        assertThat(ChatTemplate.CHATML.stopTokens(stories)).containsExactly(2);
    }

    @Test
    void renderedTurnsTokenizeWithTheirMarkersAsSingleTokens() {
        // 256 <|im_start|>, 257 <|im_end|>
        Tokenizer t = Tokenizers.from(TestVocabularies.byteLevel("qwen2", List.of("<|im_start|>", "<|im_end|>"),
                new int[] {3, 3}, List.of(), -1, -1));
        int[] first = t.encodeWithSpecials(ChatTemplate.CHATML.firstTurn(null, "Hi"));
        // <|im_start|> u s e r \n H i <|im_end|> \n <|im_start|> a s s i s t a n t \n
        assertThat(first).containsExactly(256, 'u', 's', 'e', 'r', '\n', 'H', 'i', 257, '\n',
                256, 'a', 's', 's', 'i', 's', 't', 'a', 'n', 't', '\n');
        // SentencePiece: the first turn starts the text, the next one continues it (no dummy prefix)
        Tokenizer stories = Tokenizers.from(TestVocabularies.tok512());
        String firstText = ChatTemplate.PLAIN.firstTurn(null, "Hi");
        String nextText = ChatTemplate.PLAIN.nextTurn("Bye");
        assertThat(stories.decode(stories.encodeWithSpecials(firstText))).isEqualTo(firstText);
        int[] next = stories.encodeWithSpecials(nextText, false);
        assertThat(next[0]).isEqualTo(13); // "\n" as byte token <0x0A>, no space before it
        TokenDecoder d = stories.decoder(false);
        StringBuilder sb = new StringBuilder();
        for (int id : next) {
            d.next(id, sb);
        }
        assertThat(sb.toString()).isEqualTo(nextText);
    }
}
