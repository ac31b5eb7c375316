package dev.once.example.accounts;

import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.domain.Limit;
import org.springframework.data.jpa.repository.JpaRepository;

interface AccountRepository extends JpaRepository<Account, UUID> {

    /** Tenant-scoped: another tenant's id reads as missing, never as forbidden (which would confirm it exists). */
    Optional<Account> findByIdAndTenantId(UUID id, String tenantId);

    List<Account> findByTenantIdOrderByIdDesc(String tenantId, Limit limit);
}
