package dev.once.example.tasks;

import dev.once.example.ApiProblem;
import dev.once.example.Tenancy;
import dev.once.example.Validation;
import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Submitting a task: 202 with its {@code task_id}, which is bound to the idempotency record, so a retry gets the same
 * task id back and never submits a second task. The {@code task-runner} handler runs it from the
 * {@code TaskSubmitted} event.
 */
@RestController
@RequestMapping("/tasks")
class TasksController {

    record SubmitTask(String type, JsonNode params) {
    }

    record Submitted(String taskId) {
    }

    record TaskView(String taskId, String type, JsonNode params, String state, JsonNode result, Instant doneAt) {
    }

    private final TaskRepository tasks;
    private final Tenancy tenancy;
    private final JsonMapper json;

    TasksController(TaskRepository tasks, Tenancy tenancy, JsonMapper json) {
        this.tasks = tasks;
        this.tenancy = tenancy;
        this.json = json;
    }

    @Idempotent
    @PostMapping
    ResponseEntity<Submitted> submit(@RequestBody SubmitTask body, MutationContext once) {
        String type = Validation.text("type", body.type(), 64);
        if (body.params() != null && !body.params().isObject()) {
            throw ApiProblem.invalid("'params' must be a JSON object.");
        }
        String params = body.params() == null ? "{}" : json.writeValueAsString(body.params());
        String taskId = "task_" + UUID.randomUUID();
        tasks.save(new Task(taskId, once.scope().tenantId(), type, params, once.scope().userId()));
        once.bindTask(taskId);
        once.append(once.event("task", taskId, "TaskSubmitted", 1)
                .payloadJson(json.writeValueAsString(Map.of("task_id", taskId, "type", type, "params",
                        body.params() == null ? Map.of() : body.params())))
                .build());
        return ResponseEntity.status(HttpStatus.ACCEPTED).location(URI.create("/tasks/" + taskId))
                .body(new Submitted(taskId));
    }

    @GetMapping("/{id}")
    TaskView read(@PathVariable String id, HttpServletRequest request) {
        Task task = tasks.findByIdAndTenantId(id, tenancy.of(request).tenantId())
                .orElseThrow(() -> ApiProblem.notFound("task"));
        return new TaskView(task.id(), task.type(), json.readTree(task.params()), task.state(),
                task.result() == null ? null : json.readTree(task.result()), task.doneAt());
    }
}
