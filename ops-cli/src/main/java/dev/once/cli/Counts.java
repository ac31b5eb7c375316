package dev.once.cli;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Converts {@code --limit}, {@code --batch-size} and {@code --parked-limit}: a whole number from 1 to {@value #MAX}.
 * Zero or a negative number would reach PostgreSQL as {@code LIMIT -1} or a sweep that never ends; more than a million
 * rows is more than one terminal or one short transaction should hold. The digits are counted before they are parsed,
 * so that no input, however long, can overflow on the way to the range check.
 */
final class Counts implements ITypeConverter<Integer> {

    static final int MAX = 1_000_000;

    private static final Pattern WHOLE_NUMBER = Pattern.compile("([+-]?)0*([0-9]+)");
    private static final int MAX_DIGITS = String.valueOf(MAX).length();

    @Override
    public Integer convert(String value) {
        Matcher m = WHOLE_NUMBER.matcher(value);
        if (!m.matches()) {
            throw new TypeConversionException("'" + value + "' is not a whole number from 1 to " + MAX);
        }
        String digits = m.group(2);
        int n = digits.length() > MAX_DIGITS ? Integer.MAX_VALUE : Integer.parseInt(digits);
        if (m.group(1).equals("-") || n < 1 || n > MAX) {
            throw new TypeConversionException("'" + value + "' is out of range: it must be from 1 to " + MAX);
        }
        return n;
    }
}
