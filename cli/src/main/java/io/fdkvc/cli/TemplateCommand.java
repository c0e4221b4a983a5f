package io.fdkvc.cli;

import io.fdkvc.core.param.ParameterException;
import io.fdkvc.engine.template.JinjaRenderer;
import io.fdkvc.engine.tokenizer.GgufVocabulary;
import io.fdkvc.engine.tokenizer.Vocabulary;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * A conversation rendered through a Jinja chat template as Hugging Face's
 * {@code apply_chat_template(messages, tools=..., add_generation_prompt=...)} renders it, written
 * to standard output exactly (no newline added). Where the template raises (it refuses a system
 * message, roles that do not alternate, ...) the command fails with the template's message.
 */
@Command(name = "template", mixinStandardHelpOptions = true,
        description = {"Render a conversation (a JSON list of messages) through a chat template and print the prompt "
                + "exactly, as Hugging Face's apply_chat_template does. Exit status 2 with the template's message "
                + "where the template refuses the conversation."})
public final class TemplateCommand implements Callable<Integer> {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    static final class Source {
        @Option(names = "--template", paramLabel = "FILE", required = true, description = "Jinja chat template file")
        Path template;

        @Option(names = "--model", paramLabel = "FILE", required = true,
                description = "GGUF file: its tokenizer.chat_template and its BOS and EOS token strings")
        Path model;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Source source;

    @Option(names = "--messages", paramLabel = "FILE", required = true,
            description = "JSON list of messages ({\"role\": ..., \"content\": ..., \"tool_calls\": ..., ...}), passed as they are")
    Path messages;

    @Option(names = "--tools", paramLabel = "FILE", description = "JSON list of tool definitions (the template's 'tools'; default: none)")
    Path tools;

    @Option(names = "--add-generation-prompt", description = "end with the opening of the assistant's reply")
    boolean addGenerationPrompt;

    @Option(names = "--bos-token", paramLabel = "S", description = "bos_token (default: the model's with --model, else \"\")")
    String bosToken;

    @Option(names = "--eos-token", paramLabel = "S", description = "eos_token (default: the model's with --model, else \"\")")
    String eosToken;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        String text;
        String bos = "";
        String eos = "";
        if (source.model != null) {
            Vocabulary v = GgufVocabulary.load(source.model);
            text = v.chatTemplate();
            if (text == null || text.isBlank()) {
                throw new ParameterException("model", source.model + " has no chat template (tokenizer.chat_template)");
            }
            bos = v.bos() >= 0 ? v.tokens()[v.bos()] : "";
            eos = v.eos() >= 0 ? v.tokens()[v.eos()] : "";
        } else {
            text = read(source.template, "template");
        }
        List<Map<String, Object>> conversation = messageList(json(messages, "messages"));
        Map<String, Object> variables = new HashMap<>();
        // apply_chat_template passes tools=None and documents=None when the caller gives none
        variables.put("tools", tools == null ? null : toolList(json(tools, "tools")));
        variables.put("documents", null);
        JinjaRenderer renderer = JinjaRenderer.of(text, bosToken != null ? bosToken : bos,
                eosToken != null ? eosToken : eos, Clock.systemDefaultZone());
        String prompt = renderer.render(conversation, addGenerationPrompt, variables);
        PrintWriter out = spec.commandLine().getOut();
        out.print(prompt);
        out.flush();
        return 0;
    }

    private static String read(Path file, String parameter) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new ParameterException(parameter, "cannot read " + file + ": " + e.getMessage());
        }
    }

    private static Object json(Path file, String parameter) {
        try {
            return JSON.readValue(read(file, parameter), Object.class);
        } catch (JacksonException e) {
            throw new ParameterException(parameter, file + " is not JSON: " + e.getOriginalMessage());
        }
    }

    @SuppressWarnings("unchecked")
    private List<Map<String, Object>> messageList(Object value) {
        if (!(value instanceof List<?> list)) {
            throw new ParameterException("messages", messages + ": expected a JSON list of message objects");
        }
        for (int i = 0; i < list.size(); i++) {
            if (!(list.get(i) instanceof Map<?, ?> m) || !(m.get("role") instanceof String)) {
                throw new ParameterException("messages", messages + ": message " + i + " is not an object with a \"role\" string");
            }
        }
        return (List<Map<String, Object>>) list;
    }

    private List<?> toolList(Object value) {
        if (!(value instanceof List<?> list)) {
            throw new ParameterException("tools", tools + ": expected a JSON list of tool definitions");
        }
        return list;
    }
}
