package dev.once.example.files;

import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.domain.Limit;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;

interface StoredFileRepository extends JpaRepository<StoredFile, UUID> {

    Optional<StoredFile> findByIdAndTenantId(UUID id, String tenantId);

    List<StoredFile> findByTenantIdOrderByIdDesc(String tenantId, Limit limit);

    /**
     * Completes a stored upload: one conditional UPDATE, so two different requests completing the same file
     * concurrently cannot both succeed (the second finds no {@code stored} row and gets 0).
     */
    @Modifying(flushAutomatically = true, clearAutomatically = true)
    @Query(nativeQuery = true, value = """
            UPDATE stored_file SET state = 'completed', completed_at = statement_timestamp()
             WHERE id = :id AND tenant_id = :tenantId AND state = 'stored'
            """)
    int complete(UUID id, String tenantId);
}
