package io.fdkvc.server;

import static io.fdkvc.server.Http.get;
import static io.fdkvc.server.Http.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * {@code rediss://} and ACL credentials against a real {@code redis-server} that listens for TLS
 * only, with a certificate signed by a certificate authority the test makes, and one ACL user
 * (the default user is off): the server's conversation goes through, and every misconfiguration
 * (wrong password, none, a certificate not trusted, a certificate for another host, plain
 * {@code redis://} against the TLS port, a bad CA file) is one clear line naming what to fix,
 * never the password: startup refuses what it can check without Redis, the rest is 503
 * {@code store_unavailable} on every turn and on {@code /health}.
 */
class RedisSecurityTest {
    static final String USER = "fdkvc-replica", PASSWORD = "correct horse battery staple";

    @TempDir
    static Path tmp;
    static TestCertificates certs;
    static RedisServer redis;

    @BeforeAll
    static void start() throws Exception {
        certs = TestCertificates.make(tmp.resolve("certs"));
        redis = new RedisServer(tmp.resolve("redis"), certs,
                List.of("--user", "default", "off", "--user", USER, "on", ">" + PASSWORD, "~fdkvc:*", "+@all"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (redis != null) redis.close();
    }

    static Map<String, String> env(String user, String password, Path ca) {
        Map<String, String> env = new HashMap<>();
        if (user != null) env.put(RedisStore.USER_ENV, user);
        if (password != null) env.put(RedisStore.PASSWORD_ENV, password);
        if (ca != null) env.put(RedisTls.CA_ENV, ca.toString());
        return env;
    }

    static RedisStore store(String url, Map<String, String> env, ServedModel m) {
        return new RedisStore(url, env, new SessionCodec(m.modelFingerprint(), m.cacheFingerprint(), m.policy()), 10);
    }

    static TestServers.Running server(String url, Map<String, String> env) throws Exception {
        return TestServers.start(TestServers.shared(TestServers.options(8, null, null, 4, 8), url, 10), RedisStoreTest.POLICY,
                RedisStoreTest.BUDGET, RedisStoreTest.TURN_TOKENS, System.err, m -> store(url, env, m));
    }

    /** What the store reports with these settings (null: reachable), checked against a server's model. */
    static String problem(TestServers.Running s, String url, Map<String, String> env) {
        try (RedisStore st = store(url, env, s.server().servedModel())) {
            return st.problem();
        }
    }

    @Test
    void anAclUserOverTlsStoresTheConversation() throws Exception {
        try (var s = server(redis.url(), env(USER, PASSWORD, certs.ca()))) {
            assertThat(get(s.base() + "/health").statusCode()).isEqualTo(200);
            SessionsTest.Client c = new SessionsTest.Client(s.base(), "secure");
            c.say(SessionsTest.USERS[0], RedisStoreTest.MAX_TOKENS);
            c.say(SessionsTest.USERS[1], RedisStoreTest.MAX_TOKENS);
            try (RedisStore other = store(redis.url(), env(USER, PASSWORD, certs.ca()), s.server().servedModel())) {
                SessionStore.Stored stored = other.read("secure");
                assertThat(stored.version()).isEqualTo(2);
                assertThat(stored.state().messages()).hasSize(4);
            }
            assertThat(get(s.base() + "/metrics").body()).contains("fdkvc_session_store_writes_total 2");
        }
    }

    @Test
    void aWrongPasswordFailsEveryTurnWith503NamingTheVariablesNotThePassword() throws Exception {
        String wrong = "Tr0ub4dor&3";
        try (var s = server(redis.url(), env(USER, wrong, certs.ca()))) {
            HttpResponse<String> r = RedisStoreTest.attempt(new SessionsTest.Client(s.base(), "refused"), SessionsTest.USERS[0]);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
            JsonNode err = json(r).get("error");
            assertThat(err.get("code").asString()).isEqualTo("store_unavailable");
            String message = err.get("message").asString();
            assertThat(message).contains("credentials", RedisStore.USER_ENV, RedisStore.PASSWORD_ENV).doesNotContain(wrong).doesNotContain("\n");
            HttpResponse<String> health = get(s.base() + "/health");
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(health.body()).contains(RedisStore.PASSWORD_ENV).doesNotContain(wrong);
            // the right user with no password at all: Redis asks for one
            assertThat(problem(s, redis.url(), env(null, null, certs.ca()))).contains("password", RedisStore.PASSWORD_ENV).doesNotContain("\n");
        }
    }

    @Test
    void aCertificateThatIsNotTrustedOrNamesAnotherHostIsRefused() throws Exception {
        try (var s = server(redis.url(), env(USER, PASSWORD, certs.stranger()))) {
            HttpResponse<String> r = RedisStoreTest.attempt(new SessionsTest.Client(s.base(), "untrusted"), SessionsTest.USERS[0]);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
            String message = json(r).get("error").get("message").asString();
            assertThat(message).contains("certificate", "not trusted", RedisTls.CA_ENV).doesNotContain("\n");
            // the JVM's own trust store does not know the test's authority either
            assertThat(problem(s, redis.url(), env(USER, PASSWORD, null))).contains("not trusted", RedisTls.CA_ENV);
            // the right authority, but the URL names a host the certificate does not: refused as HTTPS would
            String byName = "rediss://localhost:" + redis.port;
            assertThat(problem(s, byName, env(USER, PASSWORD, certs.ca()))).contains("localhost", "certificate").doesNotContain("\n");
            // plain redis:// against the TLS port
            assertThat(problem(s, "redis://127.0.0.1:" + redis.port, env(USER, PASSWORD, certs.ca()))).contains("rediss://")
                    .doesNotContain("\n");
        }
    }

    @Test
    void aBadCertificateAuthorityFileIsRefusedAtStartNamingTheVariable() throws Exception {
        Path notPem = Files.writeString(tmp.resolve("not.pem"), "hello");
        for (Path ca : List.of(tmp.resolve("missing.pem"), notPem)) {
            assertThatThrownBy(() -> new RedisStore(redis.url(), env(USER, PASSWORD, ca), null, 10)).as(ca.toString())
                    .isInstanceOf(InputException.class).hasMessageStartingWith(RedisTls.CA_ENV).hasMessageContaining(ca.toString());
        }
        assertThatThrownBy(() -> new RedisStore(redis.url(), env(USER, null, certs.ca()), null, 10)).isInstanceOf(InputException.class)
                .hasMessageContaining(RedisStore.PASSWORD_ENV);
    }
}
