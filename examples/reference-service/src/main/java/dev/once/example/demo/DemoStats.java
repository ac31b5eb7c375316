package dev.once.example.demo;

import java.util.concurrent.atomic.LongAdder;

/** What the demo's clients saw, counted as it happens. */
final class DemoStats {
    final LongAdder requests = new LongAdder();
    final LongAdder replayed = new LongAdder();
    final LongAdder inProgress409 = new LongAdder();
    final LongAdder conflicts422 = new LongAdder();
    final LongAdder timeouts = new LongAdder();
    final LongAdder ioErrors = new LongAdder();
    final LongAdder reuseAttempts = new LongAdder();
    final LongAdder concurrentBursts = new LongAdder();
    final LongAdder inconsistentReplays = new LongAdder();
    final LongAdder unresolved = new LongAdder();
    final LongAdder crossTenantLeaks = new LongAdder();
}
