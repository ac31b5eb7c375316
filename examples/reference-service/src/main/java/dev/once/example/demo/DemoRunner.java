package dev.once.example.demo;

import java.net.URI;
import java.util.Arrays;
import java.util.List;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * {@code --once.demo=run}: once the service is up, runs the {@link Demo} against it (or against
 * {@code --once.demo.targets=http://a:8080,http://b:8080}), prints the report and exits: 0 when every invariant
 * held, 1 otherwise. {@code --once.demo.clients} and {@code --once.demo.operations-per-client} set the load.
 */
@Component
@ConditionalOnProperty(name = "once.demo", havingValue = "run")
class DemoRunner implements ApplicationRunner {

    private final ConfigurableApplicationContext context;
    private final Environment environment;

    DemoRunner(ConfigurableApplicationContext context, Environment environment) {
        this.context = context;
        this.environment = environment;
    }

    @Override
    public void run(ApplicationArguments args) {
        String configured = environment.getProperty("once.demo.targets", "");
        List<URI> targets = configured.isBlank()
                ? List.of(URI.create("http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort()))
                : Arrays.stream(configured.split(",")).map(String::trim).map(URI::create).toList();
        Demo.Settings settings = Demo.Settings.against(targets).withLoad(
                environment.getProperty("once.demo.clients", Integer.class, 6),
                environment.getProperty("once.demo.operations-per-client", Integer.class, 50));
        System.out.println("Once demo: " + settings.clients() + " clients x " + settings.operationsPerClient()
                + " operations against " + targets + " ...");
        DemoReport report = Demo.run(settings);
        System.out.println(report.table());
        int code = report.passed() ? 0 : 1;
        System.exit(SpringApplication.exit(context, () -> code));
    }
}
