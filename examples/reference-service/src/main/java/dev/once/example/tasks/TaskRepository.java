package dev.once.example.tasks;

import java.util.Optional;
import org.springframework.data.jpa.repository.JpaRepository;

interface TaskRepository extends JpaRepository<Task, String> {

    Optional<Task> findByIdAndTenantId(String id, String tenantId);
}
