package dev.once.benchmarks.guard;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The benchmark's load generator: one kept-alive HTTP/1.1 connection per client thread, requests written as bytes and
 * responses parsed just enough to check the status and find the end of the body (Content-Length or chunked), like
 * {@code wrk}. It shares the JVM and the two cores with the server, so it must cost as little as possible:
 * {@code HttpURLConnection} spent about as much CPU per request as the server's whole HTTP stack, the same for every
 * variant, which hid the guard's cost and its savings alike. Not thread-safe: one per client thread.
 */
final class LoadClient implements AutoCloseable {

    private final int port;
    private final byte[] head;
    private Socket socket;
    private OutputStream out;
    private InputStream in;
    private final byte[] buffer = new byte[8192];
    private int position;
    private int limit;
    private final StringBuilder line = new StringBuilder(128);

    /** Requests to {@code path} with these fixed headers; a per-request {@code Idempotency-Key} is added by {@link #post}. */
    LoadClient(int port, String path, String authorization) {
        this.port = port;
        this.head = ("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nAuthorization: " + authorization
                + "\r\nContent-Type: application/json\r\nAccept: application/json\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** Posts {@code body} (with {@code key} unless null) and returns the status; throws if it is not {@code expected}. */
    int post(String key, byte[] body, int expected) throws IOException {
        boolean reused = socket != null;
        if (!reused) {
            connect();
        }
        StringBuilder headers = new StringBuilder(96);
        if (key != null) {
            headers.append("Idempotency-Key: ").append(key).append("\r\n");
        }
        headers.append("Content-Length: ").append(body.length).append("\r\n\r\n");
        byte[] tail = headers.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[head.length + tail.length + body.length];
        System.arraycopy(head, 0, request, 0, head.length);
        System.arraycopy(tail, 0, request, head.length, tail.length);
        System.arraycopy(body, 0, request, head.length + tail.length, body.length);
        while (true) {
            try {
                out.write(request);
                out.flush();
                return readResponse(expected);
            } catch (StaleConnection e) {
                if (!reused) {
                    throw e;
                }
                // the server closed the kept-alive connection while this variant waited its turn: once more, afresh
                reused = false;
                close();
                connect();
            }
        }
    }

    /** The connection ended before any byte of a response. */
    private static final class StaleConnection extends IOException {
        StaleConnection() {
            super("the connection closed before a response");
        }
    }

    private int readResponse(int expected) throws IOException {
        String statusLine = readLine();
        if (statusLine == null) {
            throw new StaleConnection();
        }
        if (!statusLine.startsWith("HTTP/1.1 ")) {
            throw new IOException("no HTTP response: " + statusLine);
        }
        int status = Integer.parseInt(statusLine.substring(9, 12));
        long length = -1;
        boolean chunked = false;
        boolean close = false;
        for (String header = readLine(); header != null && !header.isEmpty(); header = readLine()) {
            int colon = header.indexOf(':');
            String name = header.substring(0, colon);
            String value = header.substring(colon + 1).trim();
            if (name.equalsIgnoreCase("Content-Length")) {
                length = Long.parseLong(value);
            } else if (name.equalsIgnoreCase("Transfer-Encoding")) {
                chunked = value.equalsIgnoreCase("chunked");
            } else if (name.equalsIgnoreCase("Connection")) {
                close = value.equalsIgnoreCase("close");
            }
        }
        StringBuilder body = status == expected ? null : new StringBuilder();
        if (chunked) {
            for (long size = chunkSize(); size > 0; size = chunkSize()) {
                skip(size, body);
                readLine();
            }
            for (String trailer = readLine(); trailer != null && !trailer.isEmpty(); trailer = readLine()) {
                // trailers: none expected from Tomcat, skipped
            }
        } else if (length > 0) {
            skip(length, body);
        }
        if (close) {
            close();
        }
        if (status != expected) {
            throw new IllegalStateException("answered " + status + " instead of " + expected + ": " + body);
        }
        return status;
    }

    private long chunkSize() throws IOException {
        String size = readLine();
        if (size == null) {
            throw new IOException("connection closed inside a chunked body");
        }
        int extension = size.indexOf(';');
        return Long.parseLong((extension < 0 ? size : size.substring(0, extension)).trim(), 16);
    }

    private void skip(long n, StringBuilder into) throws IOException {
        for (long i = 0; i < n; i++) {
            int b = read();
            if (b < 0) {
                throw new IOException("connection closed inside a body");
            }
            if (into != null) {
                into.append((char) b);
            }
        }
    }

    private String readLine() throws IOException {
        line.setLength(0);
        for (int b = read(); b != '\n'; b = read()) {
            if (b < 0) {
                return line.length() == 0 ? null : line.toString();
            }
            if (b != '\r') {
                line.append((char) b);
            }
        }
        return line.toString();
    }

    /** The next byte of the response, from a buffer of our own (no per-byte lock, unlike BufferedInputStream). */
    private int read() throws IOException {
        if (position == limit) {
            limit = in.read(buffer);
            position = 0;
            if (limit <= 0) {
                limit = 0;
                return -1;
            }
        }
        return buffer[position++] & 0xff;
    }

    private void connect() throws IOException {
        socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress("127.0.0.1", port));
        out = socket.getOutputStream();
        in = socket.getInputStream();
        position = 0;
        limit = 0;
    }

    @Override
    public void close() throws IOException {
        if (socket != null) {
            socket.close();
            socket = null;
        }
    }
}
