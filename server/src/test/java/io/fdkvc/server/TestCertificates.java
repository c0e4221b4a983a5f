package io.fdkvc.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * A throwaway certificate authority and a Redis server certificate it signed, made with the JDK's
 * {@code keytool} in {@code dir}: {@code ca.pem}, {@code server.pem} (for 127.0.0.1) and its key
 * {@code server.key} (PKCS#8 PEM, as redis-server reads it). {@link #stranger} makes a second,
 * unrelated authority that nothing was signed by.
 */
record TestCertificates(Path ca, Path cert, Path key, Path stranger) {
    private static final String PASS = "throwaway";

    static TestCertificates make(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
        Files.createDirectories(dir);
        Path caStore = dir.resolve("ca.p12"), serverStore = dir.resolve("server.p12"), otherStore = dir.resolve("other.p12");
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=fdkvc test CA", "-ext", "bc:c",
                "-validity", "2", "-keystore", caStore.toString());
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=another CA", "-ext", "bc:c",
                "-validity", "2", "-keystore", otherStore.toString());
        keytool("-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=127.0.0.1", "-validity", "2",
                "-keystore", serverStore.toString());
        Path csr = dir.resolve("server.csr"), cert = dir.resolve("server.pem"), ca = dir.resolve("ca.pem"), other = dir.resolve("other.pem");
        keytool("-certreq", "-alias", "server", "-keystore", serverStore.toString(), "-file", csr.toString());
        keytool("-gencert", "-alias", "ca", "-keystore", caStore.toString(), "-infile", csr.toString(), "-outfile", cert.toString(),
                "-ext", "san=ip:127.0.0.1", "-ext", "ku:c=digitalSignature,keyEncipherment", "-ext", "eku=serverAuth", "-validity", "2", "-rfc");
        keytool("-exportcert", "-alias", "ca", "-keystore", caStore.toString(), "-rfc", "-file", ca.toString());
        keytool("-exportcert", "-alias", "ca", "-keystore", otherStore.toString(), "-rfc", "-file", other.toString());
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(serverStore)) {
            ks.load(in, PASS.toCharArray());
        }
        byte[] pkcs8 = ks.getKey("server", PASS.toCharArray()).getEncoded();
        Path key = dir.resolve("server.key");
        Files.writeString(key, "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(pkcs8)
                + "\n-----END PRIVATE KEY-----\n");
        return new TestCertificates(ca, cert, key, other);
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("-storetype", "PKCS12", "-storepass", PASS, "-noprompt"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) throw new IllegalStateException("keytool " + String.join(" ", args) + ": " + out);
    }
}
