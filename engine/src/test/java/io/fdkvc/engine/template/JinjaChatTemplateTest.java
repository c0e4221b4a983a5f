package io.fdkvc.engine.template;

import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import io.fdkvc.engine.tokenizer.Vocabulary;
import io.fdkvc.engine.tokenizer.GgufVocabulary;
import io.fdkvc.engine.tokenizer.TestVocabularies;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.template.ChatTemplate.ToolCall;
import java.io.IOException;
import java.nio.file.Files;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * Jinja chat templates against the text Hugging Face's {@code apply_chat_template} renders. Every
 * expected string is written out by hand from the template's logic (trim_blocks and lstrip_blocks
 * on, as transformers compiles templates), not produced by this code.
 */
class JinjaChatTemplateTest {
    static String qwen3Source() {
        try {
            return Files.readString(TestVocabularies.shared().resolve("tokenizers/qwen3/chat_template.jinja"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Qwen3's tokens: BOS "&lt;|endoftext|&gt;", EOS "&lt;|im_end|&gt;" (the template uses neither). */
    static final JinjaChatTemplate QWEN3 = JinjaChatTemplate.of(qwen3Source(), "<|endoftext|>", "<|im_end|>");

    /** A ChatML template in the style of the ones in many GGUF files, with a Python method and loop controls. */
    static final String CHATML_SOURCE = """
            {%- for message in messages -%}
                {%- if message.role not in ['system', 'user', 'assistant', 'tool'] -%}
                    {{- raise_exception('unknown role ' + message.role) -}}
                {%- endif -%}
                {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}
            {%- endfor -%}
            {%- if add_generation_prompt -%}
                {{- '<|im_start|>assistant\\n' -}}
            {%- endif -%}
            """;
    static final JinjaChatTemplate CHATML = JinjaChatTemplate.of(CHATML_SOURCE, "", "<|im_end|>");

    /**
     * Llama 3.1 style (Meta's template, without tools): BOS first, a system header with the date
     * from strftime_now, contents trimmed with {@code | trim} binding tighter than {@code +}, the
     * system message cut off with a slice, and unknown roles refused.
     */
    static final String LLAMA3_SOURCE = """
            {{- bos_token }}
            {%- if messages[0]['role'] == 'system' %}
                {%- set system_message = messages[0]['content']|trim %}
                {%- set messages = messages[1:] %}
            {%- else %}
                {%- set system_message = "" %}
            {%- endif %}
            {{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}
            {{- "Today Date: " + strftime_now("%d %b %Y") + "\\n\\n" }}
            {{- system_message }}
            {{- "<|eot_id|>" }}
            {%- for message in messages %}
                {%- if message.role not in ['user', 'assistant'] %}
                    {{- raise_exception("Conversation roles must be user or assistant, not " + message.role) }}
                {%- endif %}
                {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}
            {%- endfor %}
            {%- if add_generation_prompt %}
                {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
            {%- endif %}
            """;
    static final JinjaChatTemplate LLAMA3 = JinjaChatTemplate.of(LLAMA3_SOURCE, "<|begin_of_text|>", "<|eot_id|>");

    static final List<Message> CONVERSATION = List.of(
            Message.system("You are terse."), Message.user("Hi"), Message.assistant("Hello!"), Message.user("Bye"));

    // ---- Qwen3 ----

    /**
     * System message first (no tools), users and assistants as ChatML blocks; "Hello!" is before the
     * last user message, so it gets no think block; the generation prompt is bare.
     */
    @Test
    void qwen3MultiTurnWithSystem() {
        assertThat(QWEN3.render(CONVERSATION, true)).isEqualTo(
                "<|im_start|>system\nYou are terse.<|im_end|>\n"
                        + "<|im_start|>user\nHi<|im_end|>\n"
                        + "<|im_start|>assistant\nHello!<|im_end|>\n"
                        + "<|im_start|>user\nBye<|im_end|>\n"
                        + "<|im_start|>assistant\n");
        assertThat(QWEN3.render(CONVERSATION, false)).isEqualTo(
                "<|im_start|>system\nYou are terse.<|im_end|>\n"
                        + "<|im_start|>user\nHi<|im_end|>\n"
                        + "<|im_start|>assistant\nHello!<|im_end|>\n"
                        + "<|im_start|>user\nBye<|im_end|>\n");
    }

    /** enable_thinking = false adds an empty think block to the generation prompt; true or absent does not. */
    @Test
    void qwen3EnableThinking() {
        List<Message> hi = List.of(Message.user("Hi"));
        assertThat(QWEN3.render(hi, true, Map.of("enable_thinking", false)))
                .isEqualTo("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
        assertThat(QWEN3.render(hi, true, Map.of("enable_thinking", true)))
                .isEqualTo("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
        assertThat(QWEN3.render(hi, false, Map.of("enable_thinking", false))).isEqualTo("<|im_start|>user\nHi<|im_end|>\n");
    }

    /**
     * Reasoning: a reply before the last user message loses it (content.split('&lt;/think&gt;')[-1]
     * .lstrip('\n')); the final reply keeps it, taken from reasoning_content or from the
     * &lt;think&gt; block in its content, written between think tags.
     */
    @Test
    void qwen3ReasoningContent() {
        String thought = "<think>\nadd them\n</think>\n\n4";
        assertThat(QWEN3.render(List.of(Message.user("2+2?"), Message.assistant(thought), Message.user("and 3+3?")), true))
                .isEqualTo("<|im_start|>user\n2+2?<|im_end|>\n"
                        + "<|im_start|>assistant\n4<|im_end|>\n"
                        + "<|im_start|>user\nand 3+3?<|im_end|>\n"
                        + "<|im_start|>assistant\n");
        String last = "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nadd them\n</think>\n\n4<|im_end|>\n";
        assertThat(QWEN3.render(List.of(Message.user("2+2?"), Message.assistant(thought)), false)).isEqualTo(last);
        assertThat(QWEN3.render(List.of(Message.user("2+2?"), Message.assistant("4", "add them", List.of())), false))
                .isEqualTo(last);
        // a last reply without reasoning still gets an (empty) think block
        assertThat(QWEN3.render(List.of(Message.user("Hi"), Message.assistant("Hello!")), false))
                .isEqualTo("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>\n");
    }

    /**
     * A tool round after the last user message: the assistant's reasoning stays (it is not the
     * last message but has reasoning), its call is written with tojson's ", " and ": ", and the
     * tool result goes into a user turn inside &lt;tool_response&gt; tags.
     */
    @Test
    void qwen3ToolCallsAndResults() {
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("city", "Paris");
        args.put("days", 2);
        List<Message> messages = List.of(Message.user("Weather in Paris?"),
                Message.assistant("", "need the tool", List.of(new ToolCall("call_1", "get_weather", args))),
                Message.tool("{\"temp\": 21}", "call_1"));
        assertThat(QWEN3.render(messages, true)).isEqualTo(
                "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
                        + "<|im_start|>assistant\n<think>\nneed the tool\n</think>\n\n"
                        + "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call><|im_end|>\n"
                        + "<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response><|im_end|>\n"
                        + "<|im_start|>assistant\n");
        // arguments given as JSON text are written as they are
        List<Message> asText = List.of(Message.user("Weather?"),
                Message.assistant("Checking.", null, List.of(new ToolCall(null, "get_weather", "{\"city\":\"Paris\"}"))));
        assertThat(QWEN3.render(asText, false)).isEqualTo(
                "<|im_start|>user\nWeather?<|im_end|>\n"
                        + "<|im_start|>assistant\n<think>\n\n</think>\n\nChecking.\n"
                        + "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call><|im_end|>\n");
    }

    /** The tools list goes into the system turn, each tool as tojson on its own line. */
    @Test
    void qwen3Tools() {
        Map<String, Object> fn = new LinkedHashMap<>();
        fn.put("name", "get_weather");
        fn.put("parameters", Map.of("type", "object"));
        Map<String, Object> tool = new LinkedHashMap<>();
        tool.put("type", "function");
        tool.put("function", fn);
        String out = QWEN3.render(List.of(Message.system("S"), Message.user("Hi")), true, Map.of("tools", List.of(tool)));
        assertThat(out).isEqualTo("<|im_start|>system\nS\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                + "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
                + "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}\n"
                + "</tools>\n\nFor each function call, return a json object with function name and arguments within "
                + "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
                + "</tool_call><|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void qwen3IncrementalPieces() {
        assertThat(QWEN3.firstTurn("You are terse.", "Hi"))
                .isEqualTo("<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
        assertThat(QWEN3.nextTurn("Bye")).isEqualTo("<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n");
        assertThat(QWEN3.assistantText("Hello!")).isEqualTo("Hello!");
        assertThat(QWEN3.endOfReply()).isEqualTo("<|im_end|>\n");
        assertThat(QWEN3.stopStrings()).containsExactly("<|im_end|>");
        assertThat(QWEN3.addBos()).isFalse();
        Tokenizer qwen = Tokenizers.from(GgufVocabulary.load(TestVocabularies.shared().resolve("tokenizers/qwen3/qwen3-tokenizer.gguf")));
        assertThat(QWEN3.stopTokens(qwen)).containsExactly(qwen.tokenId("<|im_end|>"));
    }

    // ---- the templates written here ----

    @Test
    void chatmlTemplateRendersAsTheBuiltInFormat() {
        assertThat(CHATML.render(CONVERSATION, true)).isEqualTo(
                "<|im_start|>system\nYou are terse.<|im_end|>\n"
                        + "<|im_start|>user\nHi<|im_end|>\n"
                        + "<|im_start|>assistant\nHello!<|im_end|>\n"
                        + "<|im_start|>user\nBye<|im_end|>\n"
                        + "<|im_start|>assistant\n")
                .isEqualTo(ChatTemplate.CHATML.render(CONVERSATION, true));
        assertThat(CHATML.render(CONVERSATION, false)).isEqualTo(ChatTemplate.CHATML.render(CONVERSATION, true)
                .replaceAll("<\\|im_start\\|>assistant\n$", ""));
    }

    @Test
    void llama3Template() {
        String today = LocalDate.now().format(DateTimeFormatter.ofPattern("dd MMM yyyy", Locale.US));
        String header = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nToday Date: " + today + "\n\n";
        List<Message> messages = List.of(Message.system("  You are terse. "), Message.user(" Hi\n"),
                Message.assistant("Hello! "), Message.user("Bye"));
        assertThat(LLAMA3.render(messages, true)).isEqualTo(header + "You are terse.<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n");
        assertThat(LLAMA3.render(List.of(Message.user("Hi")), false))
                .isEqualTo(header + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
        assertThat(LLAMA3.endOfReply()).isEqualTo("<|eot_id|>");
        assertThat(LLAMA3.nextTurn("  Bye")).isEqualTo(
                "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        assertThat(LLAMA3.assistantText(" Hello! ")).isEqualTo("Hello!");
    }

    @Test
    void raiseExceptionBecomesAnInputExceptionWithTheTemplatesMessage() {
        List<Message> withTool = List.of(Message.user("Hi"), Message.tool("42", null));
        assertThatThrownBy(() -> LLAMA3.render(withTool, true)).isInstanceOf(InputException.class)
                .hasMessageContaining("chat template refused the conversation")
                .hasMessageContaining("Conversation roles must be user or assistant, not tool");
        // the rendering did not half-succeed: the same template still renders a good conversation
        assertThat(LLAMA3.render(List.of(Message.user("Hi")), true)).endsWith("<|start_header_id|>assistant<|end_header_id|>\n\n");
    }

    @Test
    void brokenTemplatesAreRefusedAndTheModelFallsBackToABuiltInFormat() {
        assertThatThrownBy(() -> JinjaChatTemplate.of("{% for m in messages %}{{ m.content }", "", ""))
                .isInstanceOf(InputException.class);
        assertThatThrownBy(() -> JinjaChatTemplate.of("{{ raise_exception('no chat here') }}", "", ""))
                .isInstanceOf(InputException.class).hasMessageContaining("no chat here");
        Vocabulary broken = TestVocabularies.byteLevel("qwen2", List.of("<|im_start|>", "<|im_end|>"), new int[] {3, 3},
                List.of(), -1, 257).withChatTemplate("{% if %}<|im_start|>");
        List<String> warnings = new ArrayList<>();
        assertThat(ChatTemplate.forModel(broken, warnings::add)).isEqualTo(ChatTemplate.CHATML);
        assertThat(warnings).singleElement().asString().contains("tokenizer.chat_template").contains("chatml");
        Vocabulary good = broken.withChatTemplate(CHATML_SOURCE);
        ChatTemplate t = ChatTemplate.forModel(good, warnings::add);
        assertThat(t).isInstanceOf(JinjaChatTemplate.class);
        assertThat(t.render(List.of(Message.user("x")), true)).isEqualTo("<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n");
        assertThat(t.stopTokens(Tokenizers.from(good))).containsExactly(257);
        assertThat(warnings).hasSize(1);
    }

    // ---- the Python helpers templates use ----

    private static String render(String source, Map<String, Object> vars) {
        return JinjaEnvironment.render(PythonMethodResolver.rewriteSlices(source), new LinkedHashMap<>(vars), java.time.Clock.systemDefaultZone());
    }

    @Test
    void pythonStringMethodsAndSlices() {
        Map<String, Object> v = Map.of("s", "  a,b,,c  ", "xs", List.of(1, 2, 3, 4));
        assertThat(render("[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ s.strip(' ac') }}]", v))
                .isEqualTo("[a,b,,c][a,b,,c  ][  a,b,,c][,b,,]");
        assertThat(render("{{ s.strip().split(',') }}|{{ s.split() }}|{{ 'a.b.c'.split('.', 1) }}|{{ 'a.b.c'.rsplit('.', 1) }}", v))
                .isEqualTo("['a', 'b', '', 'c']|['a,b,,c']|['a', 'b.c']|['a.b', 'c']"); // printed as Python prints lists
        // (Jinjava prints booleans as true/false, where Python prints True/False: templates test them, not print them)
        assertThat(render("{{ 'y' if s.startswith('  a') else 'n' }}{{ 'y' if s.endswith('x') else 'n' }}"
                + "{{ 'y' if 'ab'.startswith(('x', 'a')) else 'n' }}", v)).isEqualTo("yny");
        assertThat(render("{{ 'Hello World'.upper() }} {{ 'Hello'.lower() }} {{ 'hello world'.title() }} {{ 'a-a'.replace('a', 'b') }}", v))
                .isEqualTo("HELLO WORLD hello Hello World b-b");
        assertThat(render("{{ xs[::-1] }} {{ xs[1:] }} {{ xs[:-1] }} {{ xs[::2] }} {{ xs[-2:] }} {{ 'abc'[::-1] }} {{ xs[10:] }}", v))
                .isEqualTo("[4, 3, 2, 1] [2, 3, 4] [1, 2, 3] [1, 3] [3, 4] cba []");
        assertThat(render("{% for x in xs[::-1] %}{{ loop.index0 }}{{ x }}{% endfor %}", v)).isEqualTo("04132231");
        // "n+1" without spaces (Jinjava alone reads "+1" as a number), in a slice and alone; "1e-2" stays a number
        assertThat(render("{% set n = 1 %}{{ xs[:n+1] }} {{ n+1 }} {{ n-1 }} {{ 1e-2 }} {{ (n)+2 }}", v)).isEqualTo("[1, 2] 2 0 0.01 3");
        // a slice inside a string literal is text, and a list literal is no subscript
        assertThat(render("{{ '[::-1]' }}{% for x in [1, 2] %}{{ x }}{% endfor %}", v)).isEqualTo("[::-1]12");
    }

    @Test
    void loopControlsNamespaceAndTojson() {
        Map<String, Object> v = Map.of("xs", List.of(1, 2, 3, 4));
        assertThat(render("{% for x in xs %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}", v))
                .isEqualTo("13");
        assertThat(render("{% set ns = namespace(n=0) %}{% for x in xs %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}", v))
                .isEqualTo("10");
        Map<String, Object> obj = new LinkedHashMap<>();
        obj.put("b", List.of(1, "é", 1.5, true));
        obj.put("a", null);
        assertThat(render("{{ o | tojson }}", Map.of("o", obj))).isEqualTo("{\"b\": [1, \"é\", 1.5, true], \"a\": null}");
        assertThat(render("{{ o | tojson(indent=2) }}", Map.of("o", obj)))
                .isEqualTo("{\n  \"b\": [\n    1,\n    \"é\",\n    1.5,\n    true\n  ],\n  \"a\": null\n}");
        assertThat(render("{{ strftime_now('%Y') }}", Map.of())).isEqualTo(String.valueOf(LocalDate.now().getYear()));
    }

    /** Macro defaults stay as written; filter blocks; loop filters (which Jinjava alone would ignore) filter. */
    @Test
    void macrosFilterBlocksAndLoopFilters() {
        Map<String, Object> v = Map.of("xs", List.of(1, 2, 3));
        assertThat(render("{% macro f(x, pre='<', n=2) %}{{ pre }}{{ x }}{{ n }}{% endmacro %}{{ f('a') }}{{ f('b', n=xs|length - 1) }}", v))
                .isEqualTo("<a2<b2");
        assertThat(render("{% for x in (xs if xs else []) %}{{ x }}{% endfor %}", v)).isEqualTo("123");
        // filter blocks, and transformers' generation block (its content)
        assertThat(render("[{% filter trim %}  a b \n{% endfilter %}]{% generation %}c{% endgeneration %}", v)).isEqualTo("[a b]c");
        // loop filters: loop.index, loop.last and loop.length count the items that pass, as in Jinja
        assertThat(render("{%- for x in xs if x > 1 %}{{ x }}{{ loop.index }}/{{ loop.length }}{% endfor %}", v))
                .isEqualTo("21/232/2");
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("a", 1);
        d.put("b", 2);
        d.put("c", 3);
        assertThat(render("{% for k, v in d.items() if v != 2 -%}\n {{ k }}={{ v }}{{ ',' if not loop.last }}{% endfor %}",
                Map.of("d", d))).isEqualTo("a=1,c=3");
        // for ... else, which Jinjava would render after every item, is refused; an else of an if inside a loop is fine
        assertThatThrownBy(() -> render("{% for x in xs %}{{ x }}{% else %}none{% endfor %}", v))
                .isInstanceOf(InputException.class).hasMessageContaining("for ... else");
        assertThat(render("{% for x in xs %}{% if x > 1 %}{{ x }}{% else %}-{% endif %}{% endfor %}", v)).isEqualTo("-23");
        assertThat(PythonMethodResolver.hasLoopFilter("for x in xs if x else ys")).isFalse();
        assertThat(PythonMethodResolver.hasLoopFilter("for m in messages if m['role'] != 'system'")).isTrue();
        assertThat(PythonMethodResolver.hasLoopFilter("for m in messages")).isFalse();
    }

    @Test
    void pythonFloatRepr() {
        assertThat(PythonJson.pyFloat(1.0)).isEqualTo("1.0");
        assertThat(PythonJson.pyFloat(-2.5)).isEqualTo("-2.5");
        assertThat(PythonJson.pyFloat(1e-5)).isEqualTo("1e-05");
        assertThat(PythonJson.pyFloat(0.0001)).isEqualTo("0.0001");
        assertThat(PythonJson.pyFloat(1.5e16)).isEqualTo("1.5e+16");
        assertThat(PythonJson.pyFloat(1e15)).isEqualTo("1000000000000000.0");
        assertThat(PythonJson.pyFloat(0.1)).isEqualTo("0.1");
        assertThat(PythonJson.pyFloat(123.456)).isEqualTo("123.456");
        assertThat(PythonJson.pyFloat(Double.NaN)).isEqualTo("NaN");
    }

    // ---- incremental turns equal the full rendering ----

    @Property(tries = 60)
    void incrementalTurnsEqualTheFullRendering(@ForAll("template") JinjaChatTemplate t, @ForAll("content") String system,
                                              @ForAll("turns") List<String> turns, @ForAll boolean withSystem) {
        List<Message> messages = new ArrayList<>();
        if (withSystem) messages.add(Message.system(system));
        StringBuilder incremental = new StringBuilder(t.firstTurn(withSystem ? system : null, turns.getFirst()));
        messages.add(Message.user(turns.getFirst()));
        for (int i = 1; i + 1 < turns.size(); i += 2) {
            incremental.append(t.assistantText(turns.get(i))).append(t.nextTurn(turns.get(i + 1)));
            messages.add(Message.assistant(turns.get(i)));
            messages.add(Message.user(turns.get(i + 1)));
        }
        assertThat(incremental.toString()).isEqualTo(t.render(messages, true));
    }

    @Provide
    Arbitrary<JinjaChatTemplate> template() {
        return Arbitraries.of(QWEN3, CHATML, LLAMA3);
    }

    @Provide
    Arbitrary<String> content() {
        return Arbitraries.strings().withCharRange('a', 'z').withChars(' ', '\n', '!', 'é', '{', '%', '\'')
                .ofMinLength(1).ofMaxLength(20).map(String::strip).filter(s -> !s.isEmpty());
    }

    @Provide
    Arbitrary<List<String>> turns() {
        return content().list().ofMinSize(1).ofMaxSize(7).filter(l -> l.size() % 2 == 1);
    }
}
