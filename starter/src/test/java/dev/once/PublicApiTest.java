package dev.once;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The public API is a decision, written down: {@code docs/API.md} lists every public type of every published module
 * (a module whose POM does not skip the compatibility check), with what it is, read from the sources. A type made
 * public, made package-private, moved or renamed fails this until the page says so (it writes the page as it should
 * read to {@code target/API.md}); after a release, japicmp holds the listed types to their word. And what a module
 * keeps in an {@code internal} package, no other published module imports: what modules share is
 * {@code dev.once.spi}.
 */
class PublicApiTest {

    static final Path ROOT = Path.of("..");
    static final Path PAGE = ROOT.resolve("docs/API.md");
    static final String GENERATED_START = "<!-- generated from the sources: PublicApiTest -->";
    static final String GENERATED_END = "<!-- end of generated -->";

    static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    static final Pattern INTERNAL_IMPORT = Pattern.compile("^import (dev\\.once\\.[\\w.]*\\binternal)\\.\\w+;",
            Pattern.MULTILINE);
    static final Pattern ARTIFACT = Pattern.compile("<artifactId>(once-[\\w-]+)</artifactId>");

    /** A published module: its directory and artifact. */
    record Module(Path dir, String artifact) {
    }

    @Test
    void the_page_lists_every_public_type_of_every_published_module_with_what_it_is() throws IOException {
        String expected = table(published());
        String document = Files.readString(PAGE);
        String actual = document.substring(document.indexOf(GENERATED_START) + GENERATED_START.length(),
                document.indexOf(GENERATED_END)).strip();
        if (!actual.equals(expected.strip())) {
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target/API.md"), document.substring(0,
                    document.indexOf(GENERATED_START) + GENERATED_START.length()) + "\n" + expected + "\n"
                    + document.substring(document.indexOf(GENERATED_END)));
        }
        assertThat(actual).as("docs/API.md is out of date: target/API.md is what it should be")
                .isEqualTo(expected.strip());
    }

    @Test
    void no_published_module_imports_another_modules_internal_package() throws IOException {
        List<Module> modules = published();
        Map<String, String> internalOwners = new TreeMap<>();
        for (Module m : modules) {
            for (Path source : sources(m)) {
                String pkg = packageOf(Files.readString(source));
                if (pkg.endsWith(".internal")) {
                    internalOwners.put(pkg, m.artifact());
                }
            }
        }
        List<String> crossings = new ArrayList<>();
        for (Module m : modules) {
            for (Path source : sources(m)) {
                Matcher imports = INTERNAL_IMPORT.matcher(Files.readString(source));
                while (imports.find()) {
                    String owner = internalOwners.get(imports.group(1));
                    if (owner != null && !owner.equals(m.artifact())) {
                        crossings.add(ROOT.relativize(source) + " imports " + imports.group(1) + " of " + owner);
                    }
                }
            }
        }
        assertThat(internalOwners).as("the internal packages seen").isNotEmpty();
        assertThat(crossings).as("what modules share belongs in dev.once.spi").isEmpty();
    }

    /** Each published module's public top-level types, by package, with their kind. */
    static String table(List<Module> modules) throws IOException {
        StringBuilder out = new StringBuilder();
        for (Module m : modules) {
            Map<String, String> types = new TreeMap<>();
            for (Path source : sources(m)) {
                String text = Files.readString(source);
                String name = source.getFileName().toString().replace(".java", "");
                if (Pattern.compile("^public\\s+((final|abstract|sealed|non-sealed|static)\\s+)*"
                        + "(class|interface|record|enum|@interface)\\s+" + name + "\\b", Pattern.MULTILINE)
                        .matcher(text).find()) {
                    String pkg = packageOf(text);
                    types.put(pkg + "." + name, kind(pkg, name));
                }
            }
            out.append("\n### `").append(m.artifact()).append("`\n\n");
            if (types.isEmpty()) {
                out.append("No Java API.\n");
                continue;
            }
            out.append("| type | what it is |\n|---|---|\n");
            types.forEach((type, kind) -> out.append("| `").append(type).append("` | ").append(kind).append(" |\n"));
        }
        return out.toString();
    }

    static String kind(String pkg, String name) {
        if (pkg.endsWith(".internal")) {
            return "internal: its own module's, across its packages";
        }
        if (pkg.equals("dev.once.spi")) {
            return "SPI: shared by Once's modules";
        }
        if (pkg.endsWith(".autoconfigure") || name.matches("Once\\w*(AutoConfiguration|Properties)")) {
            return "autoconfiguration";
        }
        return "API";
    }

    /** The modules whose jars are published: those whose POM does not set {@code once.api.skip}. */
    static List<Module> published() throws IOException {
        List<Module> modules = new ArrayList<>();
        try (Stream<Path> poms = Files.walk(ROOT, 3)) {
            for (Path pom : poms.filter(p -> p.getFileName().toString().equals("pom.xml")).sorted().toList()) {
                Path dir = pom.getParent();
                String text = Files.readString(pom);
                if (Files.isDirectory(dir.resolve("src/main/java")) && !text.contains("<once.api.skip>true")
                        && !dir.toString().contains("compat")) {
                    String withoutParent = text.replaceAll("(?s)<parent>.*?</parent>", "");
                    Matcher artifact = ARTIFACT.matcher(withoutParent);
                    assertThat(artifact.find()).as(pom + " names its artifact").isTrue();
                    modules.add(new Module(dir, artifact.group(1)));
                }
            }
        }
        assertThat(modules).as("published modules").hasSizeGreaterThan(5);
        return modules;
    }

    static List<Path> sources(Module m) throws IOException {
        try (Stream<Path> files = Files.walk(m.dir().resolve("src/main/java"))) {
            return files.filter(p -> p.toString().endsWith(".java") && !p.endsWith("package-info.java")).sorted()
                    .toList();
        }
    }

    static String packageOf(String source) {
        Matcher m = PACKAGE.matcher(source);
        return m.find() ? m.group(1) : "";
    }
}
