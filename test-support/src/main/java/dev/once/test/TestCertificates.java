package dev.once.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A broker's key and self-signed certificate (for {@code 127.0.0.1} and {@code localhost}) and a trust store holding
 * that certificate, both PKCS12, made by the JDK's own {@code keytool} in a temporary directory: what an operator
 * does for a test cluster, with nothing checked in that could expire or leak.
 *
 * @param keyStore the broker's key and certificate
 * @param trustStore the certificate alone, for clients
 * @param password of both stores and of the key
 */
public record TestCertificates(Path keyStore, Path trustStore, String password) {

    private static final String ALIAS = "once-test-broker";

    static TestCertificates generate() {
        try {
            Path dir = Files.createTempDirectory("once-kafka-tls");
            dir.toFile().deleteOnExit();
            String password = UUID.randomUUID().toString();
            Path keyStore = dir.resolve("broker.p12");
            Path certificate = dir.resolve("broker.pem");
            Path trustStore = dir.resolve("truststore.p12");
            keytool("-genkeypair", "-alias", ALIAS, "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "30",
                    "-dname", "CN=localhost", "-ext", "SAN=IP:127.0.0.1,DNS:localhost", "-storetype", "PKCS12",
                    "-keystore", keyStore.toString(), "-storepass", password, "-keypass", password);
            keytool("-exportcert", "-rfc", "-alias", ALIAS, "-keystore", keyStore.toString(), "-storepass", password,
                    "-file", certificate.toString());
            keytool("-importcert", "-noprompt", "-alias", ALIAS, "-file", certificate.toString(), "-storetype", "PKCS12",
                    "-keystore", trustStore.toString(), "-storepass", password);
            for (Path file : List.of(keyStore, certificate, trustStore)) {
                file.toFile().deleteOnExit();
            }
            return new TestCertificates(keyStore, trustStore, password);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write the test certificates", e);
        }
    }

    private static void keytool(String... arguments) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8); // to its end
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("keytool " + arguments[0] + " did not finish within 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while keytool ran", e);
        }
        if (process.exitValue() != 0) {
            throw new IOException("keytool " + arguments[0] + " failed (" + process.exitValue() + "): " + output);
        }
    }

    @Override
    public String toString() {
        return "TestCertificates[keyStore=" + keyStore + ", trustStore=" + trustStore + "]"; // never the password
    }
}
