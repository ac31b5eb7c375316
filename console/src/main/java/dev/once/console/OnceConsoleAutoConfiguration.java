package dev.once.console;

import dev.once.OnceConfigurationException;
import dev.once.autoconfigure.OnceSchema;
import dev.once.idempotency.ClaimPartitions;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.servlet.config.annotation.ResourceHandlerRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The operator console ({@code once-console} on the classpath, a servlet web application, {@code once.console.enabled}
 * not false). It is never open: without Spring Security on the classpath the application refuses to start and says
 * what to add; with it, {@link ConsoleSecurityConfiguration} lets only the two authorities in. Runs after Spring
 * Boot's own web security, so that an application with no filter chain of its own keeps Boot's default one for
 * everything but the console.
 */
@AutoConfiguration(afterName = {
        "dev.once.autoconfigure.OnceStoreAutoConfiguration",
        "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration",
        "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnProperty(prefix = "once.console", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(OnceConsoleProperties.class)
public class OnceConsoleAutoConfiguration {

    /** Without Spring Security there is no safe console: stop, and say so once. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("org.springframework.security.web.SecurityFilterChain")
    static class WithoutSecurity {

        @Bean
        SmartInitializingSingleton onceConsoleRefusesToRunOpen() {
            throw new OnceConfigurationException("once-console is on the classpath but Spring Security is not, and "
                    + "the console is never served without it",
                    "Add spring-boot-starter-security and give your operators the authority ONCE_VIEWER or "
                    + "ONCE_OPERATOR (once.console.viewer-authority, once.console.operator-authority), or set "
                    + "once.console.enabled=false");
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.security.web.SecurityFilterChain")
    @ConditionalOnBean({DataSource.class, OnceSchema.class})
    @Import(ConsoleSecurityConfiguration.class)
    static class Console {

        @Bean
        @ConditionalOnMissingBean
        Overview onceConsoleOverview(DataSource dataSource, OnceConsoleProperties properties) {
            return new Overview(dataSource, properties.getStuckAfter(), Duration.ofMinutes(2));
        }

        @Bean
        @ConditionalOnMissingBean
        ConsoleController onceConsoleController(DataSource dataSource, Overview overview,
                                                ObjectProvider<MeterHistory> history, OnceConsoleProperties properties,
                                                ObjectProvider<ClaimPartitions> partitions) {
            return new ConsoleController(dataSource, overview, history.getIfAvailable(),
                    properties.getOperatorAuthority(), partitions.getIfAvailable(
                            () -> ClaimPartitions.create(dataSource, ClaimPartitions.Options.ofDefaults())));
        }

        @Bean
        @ConditionalOnMissingBean
        ConsolePages onceConsolePages(OnceConsoleProperties properties) {
            return new ConsolePages(path(properties));
        }

        /** The pages' own files and uPlot from its webjar, under the console's path. */
        @Bean
        WebMvcConfigurer onceConsoleResources(OnceConsoleProperties properties) {
            String path = path(properties);
            return new WebMvcConfigurer() {
                @Override
                public void addResourceHandlers(ResourceHandlerRegistry registry) {
                    registry.addResourceHandler(path + "/assets/**")
                            .addResourceLocations("classpath:/dev/once/console/assets/");
                    registry.addResourceHandler(path + "/vendor/uplot/**")
                            .addResourceLocations("classpath:/META-INF/resources/webjars/uplot/");
                }
            };
        }

        /** The charts read Once's meters from the application's registry, when it has one. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
        static class Charts {

            @Bean(initMethod = "start", destroyMethod = "close")
            @ConditionalOnMissingBean
            MeterHistory onceConsoleMeterHistory(ObjectProvider<MeterRegistry> registry,
                                                 OnceConsoleProperties properties) {
                return new MeterHistory(registry.getIfAvailable(), properties.getSampleInterval(),
                        properties.getSamples());
            }
        }

        /** {@code /actuator/once}: the overview's figures, read-only, behind the actuator's own security. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
        static class Actuator {

            @Bean
            @ConditionalOnMissingBean
            OnceEndpoint onceEndpoint(Overview overview) {
                return new OnceEndpoint(overview);
            }
        }
    }


    /** The overview, as the console shows it, for monitoring scripts. */
    @Endpoint(id = "once")
    public static class OnceEndpoint {

        private final Overview overview;

        OnceEndpoint(Overview overview) {
            this.overview = overview;
        }

        @ReadOperation
        public java.util.Map<String, Object> overview() {
            return overview.read();
        }
    }

    static String path(OnceConsoleProperties properties) {
        String path = properties.getPath();
        if (path == null || !path.matches("(/[A-Za-z0-9._~-]+)+")) {
            throw new OnceConfigurationException("once.console.path is '" + path + "'",
                    "Set it to a path such as /once: a leading slash, no trailing one, letters, digits and . _ ~ -");
        }
        return path;
    }
}
