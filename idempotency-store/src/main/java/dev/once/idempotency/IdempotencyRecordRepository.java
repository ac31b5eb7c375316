package dev.once.idempotency;

import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.repository.Repository;

/**
 * Spring Data reads of idempotency records, for applications and operator views. Read-only: it exposes no save or
 * delete, because every write must go through {@link IdempotencyStore}. Enable it with
 * {@code @EnableJpaRepositories(basePackageClasses = IdempotencyRecordRepository.class)} and
 * {@code @EntityScan(basePackageClasses = {IdempotencyRecord.class, YourEntity.class})} in your application.
 */
public interface IdempotencyRecordRepository extends Repository<IdempotencyRecord, Long> {

    Optional<IdempotencyRecord> findById(Long id);

    Optional<IdempotencyRecord> findByTenantIdAndUserIdAndRouteAndIdempotencyKey(String tenantId, String userId,
                                                                                  String route, String idempotencyKey);

    List<IdempotencyRecord> findByOutboxEventId(UUID outboxEventId);

    List<IdempotencyRecord> findByTenantIdAndTaskId(String tenantId, String taskId);

    Page<IdempotencyRecord> findByStatus(IdempotencyStatus status, Pageable pageable);

    Page<IdempotencyRecord> findByTenantIdAndStatus(String tenantId, IdempotencyStatus status, Pageable pageable);

    long countByStatus(IdempotencyStatus status);
}
