-- The first migration's name in Once's development builds before 0.1.0 (a stand-in: MigrationsIT only needs the name).
CREATE TABLE idempotency_record (id bigint PRIMARY KEY);
