package dev.once.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/** Prints machine-stable JSON or aligned human tables; colour only when stdout is a terminal. */
final class Output {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private Output() {
    }

    static void json(PrintWriter out, Object value) {
        out.println(JSON.writeValueAsString(value));
    }

    /** {@code key: value} lines with the values aligned. */
    static void fields(PrintWriter out, Map<String, ?> fields) {
        int width = fields.keySet().stream().mapToInt(String::length).max().orElse(0);
        fields.forEach((k, v) -> out.println(String.format("%-" + width + "s  %s", k, v == null ? "-" : v)));
    }

    /** A table with a header row and columns padded to their widest cell. */
    static void table(PrintWriter out, List<String> header, List<List<String>> rows) {
        List<Integer> widths = new ArrayList<>();
        for (int c = 0; c < header.size(); c++) {
            int w = header.get(c).length();
            for (List<String> row : rows) {
                w = Math.max(w, row.get(c) == null ? 1 : row.get(c).length());
            }
            widths.add(w);
        }
        out.println(line(header, widths, System.console() != null));
        rows.forEach(row -> out.println(line(row, widths, false)));
    }

    private static String line(List<String> cells, List<Integer> widths, boolean bold) {
        StringBuilder s = new StringBuilder();
        for (int c = 0; c < cells.size(); c++) {
            String cell = cells.get(c) == null ? "-" : cells.get(c);
            s.append(c == 0 ? "" : "  ").append(String.format("%-" + widths.get(c) + "s", cell));
        }
        String text = s.toString().stripTrailing();
        return bold ? "\u001B[1m" + text + "\u001B[0m" : text;
    }
}
