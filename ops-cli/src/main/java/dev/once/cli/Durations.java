package dev.once.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Converts {@code --older-than}: {@code 30s}, {@code 5m}, {@code 2h}, {@code 7d}, {@code 250ms} or an ISO-8601
 * duration such as {@code PT5M}, from zero to {@value #MAX_DAYS} days. A negative age would select records from the
 * future, and the store hands the duration to PostgreSQL in milliseconds, subtracted from now: a hundred years is more
 * than any record lives, and far from where milliseconds overflow a long or the timestamp leaves PostgreSQL's range.
 */
final class Durations implements ITypeConverter<Duration> {

    static final long MAX_DAYS = 36_500;
    static final Duration MAX = Duration.ofDays(MAX_DAYS);

    private static final Pattern SHORT = Pattern.compile("(-?)0*([0-9]+)(ms|s|m|h|d)");
    private static final Duration SATURATED = Duration.ofMillis(Long.MAX_VALUE);
    private static final Map<String, Long> MILLIS_PER_UNIT = Map.of("ms", 1L, "s", 1_000L, "m", 60_000L,
            "h", 3_600_000L, "d", 86_400_000L);

    @Override
    public Duration convert(String value) {
        Matcher m = SHORT.matcher(value.trim());
        Duration d = m.matches() ? shortForm(m) : iso(value.trim());
        if (d == null) {
            throw new TypeConversionException("'" + value + "' is not a duration such as 30s, 5m, 2h, 7d or PT5M");
        }
        if (d.isNegative()) {
            throw new TypeConversionException("'" + value + "' is negative: it must be from 0s to " + MAX_DAYS + "d");
        }
        if (d.compareTo(MAX) > 0) {
            throw new TypeConversionException("'" + value + "' is too long: it must be from 0s to " + MAX_DAYS + "d");
        }
        return d;
    }

    private static Duration shortForm(Matcher m) {
        String digits = m.group(2);
        long perUnit = MILLIS_PER_UNIT.get(m.group(3));
        // Saturates instead of overflowing (99999999999999999999d, 9223372036854775807d): the range check refuses it.
        Duration d = digits.length() > 18 || Long.parseLong(digits) > Long.MAX_VALUE / perUnit ? SATURATED
                : Duration.ofMillis(Long.parseLong(digits) * perUnit);
        return m.group(1).isEmpty() ? d : d.negated();
    }

    private static Duration iso(String value) {
        try {
            return Duration.parse(value);
        } catch (DateTimeParseException | ArithmeticException e) {
            // The first is also how Duration.parse reports an overflow, such as PT9999999999999999999S.
            return null;
        }
    }

    static String human(Duration d) {
        long s = d.toSeconds();
        return s >= 86_400 ? (s / 86_400) + "d" + ((s % 86_400) / 3600) + "h"
                : s >= 3600 ? (s / 3600) + "h" + ((s % 3600) / 60) + "m"
                : s >= 60 ? (s / 60) + "m" + (s % 60) + "s" : s + "s";
    }
}
