package dev.once.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Parses {@code 30s}, {@code 5m}, {@code 2h}, {@code 7d} or an ISO-8601 duration such as {@code PT5M}. */
final class Durations implements ITypeConverter<Duration> {

    private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    @Override
    public Duration convert(String value) {
        Matcher m = SHORT.matcher(value.trim());
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        }
        try {
            return Duration.parse(value.trim());
        } catch (RuntimeException e) {
            throw new TypeConversionException("'" + value + "' is not a duration such as 30s, 5m, 2h, 7d or PT5M");
        }
    }

    static String human(Duration d) {
        long s = d.toSeconds();
        return s >= 86_400 ? (s / 86_400) + "d" + ((s % 86_400) / 3600) + "h"
                : s >= 3600 ? (s / 3600) + "h" + ((s % 3600) / 60) + "m"
                : s >= 60 ? (s / 60) + "m" + (s % 60) + "s" : s + "s";
    }
}
