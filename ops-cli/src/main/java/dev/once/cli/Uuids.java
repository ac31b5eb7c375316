package dev.once.cli;

import java.util.UUID;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Converts {@code --event-id}: a UUID in its canonical 8-4-4-4-12 hex form. UUID.fromString alone also accepts
 * shortened groups such as {@code 1-2-3-4-5}, which no event id ever has, so the form is checked first.
 */
final class Uuids implements ITypeConverter<UUID> {

    private static final Pattern CANONICAL =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    @Override
    public UUID convert(String value) {
        if (!CANONICAL.matcher(value).matches()) {
            throw new TypeConversionException("'" + value + "' is not a UUID such as "
                    + "0190a8c2-7b3e-7c1a-9f2e-3b4c5d6e7f80");
        }
        return UUID.fromString(value);
    }
}
