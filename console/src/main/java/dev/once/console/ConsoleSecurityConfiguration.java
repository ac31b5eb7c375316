package dev.once.console;

import dev.once.OnceConfigurationException;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The console's own filter chain, for its path only, ahead of the application's: the application's users and
 * authentication (its {@code UserDetailsService} or authentication provider), the viewer or operator authority to
 * look, the operator authority to act, CSRF on every action (the token in the {@code XSRF-TOKEN} cookie, sent back as
 * {@code X-XSRF-TOKEN}), a form login at {@code <path>/login} and HTTP Basic for scripts. Replace it by declaring a
 * bean named {@code onceConsoleSecurityFilterChain}.
 */
@Configuration(proxyBeanMethods = false)
class ConsoleSecurityConfiguration {

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE + 50)
    @ConditionalOnMissingBean(name = "onceConsoleSecurityFilterChain")
    SecurityFilterChain onceConsoleSecurityFilterChain(HttpSecurity http, OnceConsoleProperties properties)
            throws Exception {
        String path = OnceConsoleAutoConfiguration.path(properties);
        String viewer = authority(properties.getViewerAuthority(), "viewer");
        String operator = authority(properties.getOperatorAuthority(), "operator");
        return http.securityMatcher(path, path + "/**")
                .authorizeHttpRequests(a -> a
                        .requestMatchers(path + "/login", path + "/assets/**", path + "/vendor/**").permitAll()
                        .requestMatchers(HttpMethod.GET, path, path + "/**").hasAnyAuthority(viewer, operator)
                        .requestMatchers(HttpMethod.POST, path + "/logout").authenticated()
                        .anyRequest().hasAuthority(operator))
                .formLogin(f -> f.loginPage(path + "/login").loginProcessingUrl(path + "/login")
                        .defaultSuccessUrl(path + "/", true).failureUrl(path + "/login?error"))
                .httpBasic(Customizer.withDefaults())
                .logout(l -> l.logoutUrl(path + "/logout").logoutSuccessUrl(path + "/login?logout"))
                .csrf(c -> c.spa())
                .headers(h -> h.contentSecurityPolicy(csp -> csp.policyDirectives(
                        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                                + "frame-ancestors 'none'; form-action 'self'")))
                .build();
    }

    private static String authority(String value, String which) {
        if (value == null || value.isBlank()) {
            throw new OnceConfigurationException("once.console." + which + "-authority is empty",
                    "Set it to the authority your " + which + "s hold, e.g. ONCE_" + which.toUpperCase());
        }
        return value;
    }
}
