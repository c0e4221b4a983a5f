package io.fdkvc.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import org.junit.jupiter.api.Test;

/** {@code --session-store} URLs: what is read from them, and every refusal naming the option. */
class RedisAddressTest {

    @Test
    void readsHostPortDatabaseAndTls() {
        assertThat(RedisStore.Address.parse("redis://127.0.0.1")).isEqualTo(new RedisStore.Address(false, "127.0.0.1", 6379, 0));
        assertThat(RedisStore.Address.parse("rediss://cache.example:6380/3")).isEqualTo(new RedisStore.Address(true, "cache.example", 6380, 3));
        assertThat(RedisStore.Address.parse("redis://h:1/").where()).isEqualTo("redis://h:1/0");
    }

    @Test
    void refusesWhatIsNotARedisUrlNamingTheOption() {
        for (String bad : new String[] {"garbage", "http://h:6379", "redis://[::1", "redis://user:pw@h:6379", "redis://:pw@h",
                "redis://h:99999", "redis://h:6379/16", "redis://h:6379/-1", "redis://h:6379/x", "redis://h?db=1", "redis:///0"}) {
            assertThatThrownBy(() -> RedisStore.Address.parse(bad)).as(bad).isInstanceOf(InputException.class)
                    .hasMessageStartingWith("--session-store");
        }
    }

    @Test
    void theServerOptionsRefuseABadUrlBeforeAnythingStarts() {
        assertThatThrownBy(() -> new ChatServer.Options("127.0.0.1", 0, 4, null, null, 1, 4, 32, 64 * 1024, 0f, 1f, "strict", 16,
                ChatServer.Options.DEFAULT_MAX_PROMPT_TOKENS, ChatServer.Options.DEFAULT_READ_TIMEOUT_SECONDS,
                ChatServer.Options.DEFAULT_MAX_CONNECTIONS, "redis://h:0x", ChatServer.Options.DEFAULT_LEASE_SECONDS))
                .isInstanceOf(InputException.class).hasMessageStartingWith("--session-store");
    }
}
