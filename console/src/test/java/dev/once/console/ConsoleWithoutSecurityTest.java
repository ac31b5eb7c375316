package dev.once.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.OnceConfigurationException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/** The console is never served open: without Spring Security the application does not start, and says why. */
class ConsoleWithoutSecurityTest {

    final WebApplicationContextRunner context = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(OnceConsoleAutoConfiguration.class));

    @Test
    void without_spring_security_startup_fails_naming_the_fix() {
        context.withClassLoader(new FilteredClassLoader("org.springframework.security")).run(app -> {
            assertThat(app).hasFailed();
            assertThat(app.getStartupFailure()).rootCause().isInstanceOf(OnceConfigurationException.class)
                    .hasMessageContaining("Spring Security is not")
                    .hasMessageContaining("Add spring-boot-starter-security")
                    .hasMessageContaining("once.console.enabled=false");
        });
    }

    @Test
    void switched_off_it_asks_for_nothing() {
        context.withClassLoader(new FilteredClassLoader("org.springframework.security"))
                .withPropertyValues("once.console.enabled=false").run(app -> assertThat(app).hasNotFailed());
    }

    @Test
    void the_properties_defaults_are_the_console_s_constants() {
        var properties = new dev.once.console.OnceConsoleProperties();
        assertThat(java.util.List.of(properties.getPath(), properties.getViewerAuthority(),
                properties.getOperatorAuthority(), properties.getSampleInterval(), properties.getSamples(),
                properties.getStuckAfter())).containsExactly(Console.PATH, Console.VIEWER, Console.OPERATOR,
                Console.SAMPLE_INTERVAL, Console.SAMPLES, Console.STUCK_AFTER);
    }
}
