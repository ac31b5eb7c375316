package dev.once;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanWrapperImpl;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The settings reference is the configuration metadata, both ways: {@code docs/CONFIGURATION.md} lists every
 * {@code once.*} property of every module, with the default its properties class really has and the description its
 * Javadoc gives, and every {@code once.*} property a README's settings table names exists. When a property is added,
 * renamed or its default changes, this fails and writes the reference as it should read to
 * {@code target/CONFIGURATION.md}.
 */
class ConfigurationReferenceTest {

    static final Path ROOT = Path.of("..");
    static final Path REFERENCE = ROOT.resolve("docs/CONFIGURATION.md");
    static final String GENERATED_START = "<!-- generated from the configuration metadata: ConfigurationReferenceTest -->";
    static final String GENERATED_END = "<!-- end of generated -->";

    /** One property: its name, default as shown, description; deprecated ones carry their replacement. */
    record Property(String name, String defaultValue, String description, String replacement) {
    }

    @Test
    void the_reference_lists_every_property_with_its_real_default() throws IOException {
        String expected = table(properties());
        String document = Files.readString(REFERENCE);
        String actual = document.substring(document.indexOf(GENERATED_START) + GENERATED_START.length(),
                document.indexOf(GENERATED_END)).strip();
        if (!actual.equals(expected.strip())) {
            String rewritten = document.substring(0, document.indexOf(GENERATED_START) + GENERATED_START.length())
                    + "\n" + expected + "\n" + document.substring(document.indexOf(GENERATED_END));
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target/CONFIGURATION.md"), rewritten);
        }
        assertThat(actual).as("docs/CONFIGURATION.md is out of date: target/CONFIGURATION.md is what it should be")
                .isEqualTo(expected.strip());
    }

    @Test
    void every_property_a_readme_settings_table_names_exists() throws IOException {
        Set<String> known = new LinkedHashSet<>();
        properties().forEach(p -> known.add(p.name()));
        List<String> unknown = new ArrayList<>();
        int named = 0;
        try (Stream<Path> files = Stream.concat(Stream.of(ROOT.resolve("README.md")), Stream.concat(
                Files.list(ROOT).filter(Files::isDirectory).map(d -> d.resolve("README.md")),
                Files.list(ROOT.resolve("outbox-dispatcher")).filter(Files::isDirectory).map(d -> d.resolve("README.md"))))) {
            for (Path file : files.filter(Files::exists).toList()) {
                for (String name : tableProperties(Files.readAllLines(file))) {
                    named++;
                    if (known.stream().noneMatch(k -> k.equals(name) || name.startsWith(k + ".") || name.startsWith(k + "["))) {
                        unknown.add(ROOT.relativize(file) + ": " + name);
                    }
                }
            }
        }
        assertThat(unknown).as("settings named in README tables that no module has").isEmpty();
        assertThat(named).as("the tables were found").isGreaterThan(30);
    }

    /**
     * The {@code once.*} names in the first column of settings tables: under a heading "Configuration (`once.x.*`)",
     * or in a table whose first header cell is `once.x.*`, names are relative to that prefix.
     */
    static List<String> tableProperties(List<String> lines) {
        List<String> names = new ArrayList<>();
        String prefix = null;
        Pattern heading = Pattern.compile("^#+ .*\\(`(once\\.[a-z.-]+)\\.\\*`\\)");
        Pattern header = Pattern.compile("^\\| `(once\\.[a-z.-]+)\\.\\*` \\|");
        Pattern name = Pattern.compile("`([a-z.\\[\\]<>-]+)`");
        for (String line : lines) {
            Matcher h = heading.matcher(line);
            if (h.find()) {
                prefix = h.group(1);
                continue;
            }
            if (line.startsWith("#")) {
                prefix = null;
            }
            Matcher t = header.matcher(line);
            if (t.find()) {
                prefix = t.group(1);
                continue;
            }
            if (prefix == null || !line.startsWith("| `")) {
                continue;
            }
            String cell = line.substring(2, line.indexOf(" |", 2));
            Matcher n = name.matcher(cell);
            String previous = null;
            while (n.find()) {
                String token = n.group(1);
                String full = token.startsWith(".") && previous != null
                        ? previous.substring(0, previous.lastIndexOf('.')) + token : prefix + "." + token;
                names.add(full.replace(".*", "").replaceAll("\\.<[a-z-]+>$", ""));
                previous = full;
            }
        }
        return names;
    }

    /** Every {@code once.*} property of every module on the classpath, by name. */
    static Collection<Property> properties() throws IOException {
        JsonMapper json = JsonMapper.builder().build();
        Map<String, Property> properties = new TreeMap<>();
        Map<String, String> groupsByType = new TreeMap<>();
        List<JsonNode> documents = new ArrayList<>();
        Enumeration<URL> resources = ConfigurationReferenceTest.class.getClassLoader()
                .getResources("META-INF/spring-configuration-metadata.json");
        while (resources.hasMoreElements()) {
            try (InputStream in = resources.nextElement().openStream()) {
                documents.add(json.readTree(in));
            }
        }
        for (JsonNode document : documents) {
            for (JsonNode group : document.path("groups")) {
                if (group.get("name").asString().startsWith("once.")) {
                    groupsByType.put(group.get("type").asString(), group.get("name").asString());
                }
            }
        }
        for (JsonNode document : documents) {
            for (JsonNode property : document.path("properties")) {
                String name = property.get("name").asString();
                if (!name.startsWith("once.")) {
                    continue;
                }
                JsonNode deprecation = property.path("deprecation");
                String replacement = deprecation.isMissingNode() ? null : deprecation.path("replacement").asString();
                properties.put(name, new Property(name, defaultOf(name, property, groupsByType),
                        property.path("description").asString("").replace("\n", " ").replace("|", "\\|")
                                .replaceAll("\\{@(?:code|link) ([^}]*)}", "`$1`"), replacement));
            }
        }
        return properties.values();
    }

    /**
     * The value a new instance of the property's declaring class holds (its field initialiser: the library's
     * constant), else the metadata's default.
     */
    static String defaultOf(String name, JsonNode property, Map<String, String> groupsByType) {
        Object value = null;
        String type = property.path("sourceType").asString("");
        String group = groupsByType.get(type);
        if (group != null && name.startsWith(group + ".")) {
            try {
                Object instance = Class.forName(type).getDeclaredConstructor().newInstance();
                String path = camel(name.substring(group.length() + 1));
                value = new BeanWrapperImpl(instance).getPropertyValue(path);
            } catch (ReflectiveOperationException | RuntimeException e) {
                value = null;
            }
        }
        if (value == null && property.has("defaultValue")) {
            value = property.get("defaultValue").asString();
        }
        return show(value);
    }

    static String camel(String dashed) {
        StringBuilder out = new StringBuilder();
        boolean upper = false;
        for (char c : dashed.toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                out.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return out.toString();
    }

    static String show(Object value) {
        if (value == null) {
            return "none";
        }
        if (value instanceof Duration d) {
            if (d.isZero()) {
                return "`0s`";
            }
            long ms = d.toMillis();
            for (Object[] unit : new Object[][] {{86_400_000L, "d"}, {3_600_000L, "h"}, {60_000L, "m"}, {1_000L, "s"}}) {
                if (ms % (Long) unit[0] == 0 && (ms != 86_400_000L || !"d".equals(unit[1]))) {
                    return "`" + ms / (Long) unit[0] + unit[1] + "`";
                }
            }
            return "`" + ms + "ms`";
        }
        if (value instanceof Enum<?> e) {
            return "`" + e.name().toLowerCase(Locale.ROOT).replace('_', '-') + "`";
        }
        if (value instanceof Map<?, ?> m) {
            return m.isEmpty() ? "none" : "`" + m + "`";
        }
        if (value instanceof Collection<?> c) {
            return c.isEmpty() ? "none" : "`" + String.join(", ", c.stream().map(String::valueOf).sorted().toList()) + "`";
        }
        String text = String.valueOf(value);
        return text.isEmpty() ? "none" : "`" + text + "`";
    }

    /** The generated part of the reference: one table per top-level prefix, then the renamed settings. */
    static String table(Collection<Property> properties) {
        StringBuilder out = new StringBuilder();
        String section = null;
        for (Property p : properties) {
            if (p.replacement() != null) {
                continue;
            }
            String top = p.name().split("\\.").length > 3 && p.name().startsWith("once.outbox.")
                    ? p.name().substring(0, p.name().indexOf('.', "once.outbox.".length()))
                    : p.name().substring(0, p.name().indexOf('.', "once.".length()));
            if (!top.equals(section)) {
                section = top;
                out.append("\n### `").append(top).append(".*`\n\n| property | default | what it does |\n|---|---|---|\n");
            }
            out.append("| `").append(p.name()).append("` | ").append(p.defaultValue()).append(" | ")
                    .append(p.description()).append(" |\n");
        }
        out.append("\n### Renamed: startup stops and names the replacement\n\n| old name | use |\n|---|---|\n");
        properties.stream().filter(p -> p.replacement() != null).forEach(p -> out.append("| `").append(p.name())
                .append("` | `").append(p.replacement()).append("` |\n"));
        return out.toString();
    }

}
