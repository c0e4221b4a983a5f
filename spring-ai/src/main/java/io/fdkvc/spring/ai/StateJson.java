package io.fdkvc.spring.ai;

import io.fdkvc.core.InputException;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/** The memory state's attributes as the JSON text of a message (repositories keep text and type only). */
final class StateJson {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private StateJson() {}

    static String write(Map<String, Object> attributes) {
        return JSON.writeValueAsString(attributes);
    }

    static Map<String, Object> read(String text, String conversationId) {
        try {
            return JSON.readValue(text, new TypeReference<Map<String, Object>>() {});
        } catch (JacksonException e) {
            throw new InputException("chat memory repository, conversation '" + conversationId + "', state message: not JSON ("
                    + e.getOriginalMessage() + ")");
        }
    }
}
