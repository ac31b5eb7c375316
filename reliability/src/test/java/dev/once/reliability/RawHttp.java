package dev.once.reliability;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;

/**
 * HTTP/1.1 written byte by byte, for requests a well-behaved client library refuses to send: control characters,
 * raw non-ASCII bytes and CR/LF in header values, duplicated headers.
 */
final class RawHttp {

    record Response(int status, String headers, String body) {
        String header(String name) {
            for (String line : headers.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    private final int port;

    RawHttp(int port) {
        this.port = port;
    }

    /** GETs {@code path} as {@code user}. */
    Response get(String path, String user) {
        return send("GET", path, user, new byte[0]);
    }

    /** POSTs {@code body} as {@code user} with the given raw header lines (each without its CRLF; ISO-8859-1). */
    Response post(String path, String user, byte[] body, String... headerLines) {
        return send("POST", path, user, body, headerLines);
    }

    private Response send(String method, String path, String user, byte[] body, String... headerLines) {
        StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n");
        if (user != null) {
            head.append("Authorization: Basic ")
                    .append(Base64.getEncoder().encodeToString((user + ":" + user + "-pass").getBytes(StandardCharsets.UTF_8)))
                    .append("\r\n");
        }
        for (String line : headerLines) {
            head.append(line).append("\r\n");
        }
        head.append("\r\n");
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            return parse(socket.getInputStream().readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Response parse(byte[] raw) {
        String text = new String(raw, StandardCharsets.UTF_8);
        int end = text.indexOf("\r\n\r\n");
        String head = end < 0 ? text : text.substring(0, end);
        String body = end < 0 ? "" : text.substring(end + 4);
        int status = Integer.parseInt(head.substring(9, 12));
        Response response = new Response(status, head, body);
        String encoding = response.header("Transfer-Encoding");
        if (encoding != null && encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
            response = new Response(status, head, dechunk(body));
        }
        return response;
    }

    private static String dechunk(String chunked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] bytes = chunked.getBytes(StandardCharsets.UTF_8);
        int at = 0;
        while (at < bytes.length) {
            int lineEnd = indexOf(bytes, at);
            int size = Integer.parseInt(new String(bytes, at, lineEnd - at, StandardCharsets.US_ASCII).trim(), 16);
            if (size == 0) {
                break;
            }
            out.write(bytes, lineEnd + 2, size);
            at = lineEnd + 2 + size + 2;
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static int indexOf(byte[] bytes, int from) {
        for (int i = from; i < bytes.length - 1; i++) {
            if (bytes[i] == '\r' && bytes[i + 1] == '\n') {
                return i;
            }
        }
        return bytes.length;
    }

}
