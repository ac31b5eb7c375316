package dev.once.dispatch;

import javax.sql.DataSource;

/**
 * Whether a {@link KafkaEventDispatcher} parks failing keys in PostgreSQL ({@code once_parked_event}) and retries them
 * in the background, or, {@link #off()}, retries a failing record in place and then dead-letters it.
 */
public final class Parking {

    private static final Parking OFF = new Parking(null, null);

    private final DataSource dataSource;
    private final ParkingPolicy policy;

    private Parking(DataSource dataSource, ParkingPolicy policy) {
        this.dataSource = dataSource;
        this.policy = policy;
    }

    /** Parks in {@code dataSource}, the claims', whose schema {@code OnceMigrations} created. */
    public static Parking on(DataSource dataSource, ParkingPolicy policy) {
        if (dataSource == null || policy == null) {
            throw new IllegalArgumentException("parking needs the store's DataSource and a policy");
        }
        return new Parking(dataSource, policy);
    }

    /** No parking: a failing record is retried in place ({@link RetryPolicy}), then dead-lettered. */
    public static Parking off() {
        return OFF;
    }

    public boolean enabled() {
        return dataSource != null;
    }

    DataSource dataSource() {
        return dataSource;
    }

    ParkingPolicy policy() {
        return policy;
    }
}
