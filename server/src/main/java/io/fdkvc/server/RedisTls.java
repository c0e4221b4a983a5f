package io.fdkvc.server;

import io.fdkvc.core.InputException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS towards Redis ({@code rediss://}): the server's certificate must chain to a trusted
 * certificate authority and name the host of the URL. The authorities are the PEM file named by
 * {@link #CA_ENV} when it is set, otherwise the JVM's trust store (its default one, or the
 * standard {@code javax.net.ssl.trustStore} properties). Verification cannot be turned off.
 */
final class RedisTls {
    /** Environment variable naming a PEM file of the certificate authorities to trust for Redis. */
    static final String CA_ENV = "FDKVC_REDIS_CA";

    private RedisTls() {}

    /** Sockets that trust the authorities in {@code caFile} (null: the JVM's trust store). */
    static SSLSocketFactory sockets(String caFile) {
        if (caFile == null || caFile.isEmpty()) return (SSLSocketFactory) SSLSocketFactory.getDefault();
        Collection<? extends Certificate> cas;
        try (InputStream in = Files.newInputStream(Path.of(caFile))) {
            cas = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (NoSuchFileException e) {
            throw new InputException(CA_ENV + ": no such file: " + caFile);
        } catch (IOException e) {
            throw new InputException(CA_ENV + ": cannot read " + caFile + " (" + e.getMessage() + ")");
        } catch (CertificateException e) {
            throw new InputException(CA_ENV + ": " + caFile + " is not a PEM file of certificates (" + e.getMessage() + ")");
        }
        if (cas.isEmpty()) throw new InputException(CA_ENV + ": " + caFile + " holds no certificate");
        try {
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            int i = 0;
            for (Certificate c : cas) trusted.setCertificateEntry("ca-" + i++, c);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trusted);
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(null, tmf.getTrustManagers(), null);
            return tls.getSocketFactory();
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("the JVM cannot set up TLS: " + e.getMessage(), e);
        }
    }

    /** The host name (or IP address) in the URL must be one the certificate names, as HTTPS checks it. */
    static SSLParameters verifyHost() {
        SSLParameters p = new SSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        return p;
    }
}
