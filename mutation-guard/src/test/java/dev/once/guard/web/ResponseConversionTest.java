package dev.once.guard.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.guard.GuardResult;
import dev.once.idempotency.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;
import org.springframework.mock.web.MockHttpServletResponse;

/** How a completed result is answered, on the servlet response and as an entity, whatever the container does after. */
class ResponseConversionTest {

    private final ResponseConversion conversion = new ResponseConversion(List.of(), Set.of("Location"));

    @Test
    void a_response_with_a_body_is_written_with_its_length_and_committed() {
        MockHttpServletResponse servlet = new MockHttpServletResponse();

        conversion.write(replayed(StoredResponse.of(201, "application/json", "{\"id\":1}")), servlet);

        assertThat(servlet.getStatus()).isEqualTo(201);
        assertThat(servlet.getContentAsByteArray()).asString(StandardCharsets.UTF_8).isEqualTo("{\"id\":1}");
        assertThat(servlet.getHeader("Content-Length")).isEqualTo("8");
        assertThat(servlet.getHeader("Idempotent-Replayed")).isEqualTo("true");
        assertThat(servlet.isCommitted()).isTrue();
    }

    @Test
    void an_empty_200_says_its_length_is_zero() {
        MockHttpServletResponse servlet = new MockHttpServletResponse();

        conversion.write(replayed(StoredResponse.of(200, null, new byte[0])), servlet);

        assertThat(servlet.getHeader("Content-Length")).isEqualTo("0");
        assertThat(servlet.getContentAsByteArray()).isEmpty();
    }

    @Test
    void no_content_and_not_modified_are_written_without_a_length_or_a_body() {
        for (int status : new int[] {204, 304}) {
            MockHttpServletResponse servlet = new MockHttpServletResponse();

            conversion.write(replayed(StoredResponse.of(status, null, new byte[0])), servlet);

            assertThat(servlet.getStatus()).isEqualTo(status);
            assertThat(servlet.getHeader("Content-Length")).as("status %d", status).isNull();
            assertThat(servlet.getContentAsByteArray()).isEmpty();
            assertThat(servlet.isCommitted()).isTrue();
        }
    }

    @Test
    void as_an_entity_a_response_without_a_body_has_none() {
        ResponseEntity<?> noContent = conversion.toEntity(replayed(StoredResponse.of(204, null, new byte[0])));
        ResponseEntity<?> created = conversion.toEntity(replayed(StoredResponse.of(201, "text/plain", "ok")));

        assertThat(noContent.getStatusCode().value()).isEqualTo(204);
        assertThat(noContent.hasBody()).isFalse();
        assertThat(noContent.getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
        assertThat((byte[]) created.getBody()).asString(StandardCharsets.UTF_8).isEqualTo("ok");
    }

    private static GuardResult.Completed replayed(StoredResponse response) {
        return new GuardResult.Completed(response, null, null, true);
    }
}
