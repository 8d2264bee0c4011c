package org.tornadomla.cli;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a second JVM (pd-demo's decode process) takes from this one: the kernels' settings, nothing else. */
class ChildJvmTest {
    @Test
    void aChildGetsTheXxOptionsAndJavaFastsPropertiesOnly() {
        Properties p = new Properties();
        p.setProperty("tornadomla.fast.touch", "false");
        p.setProperty("javax.net.ssl.trustStorePassword", "secret");
        p.setProperty("user.dir", "/tmp");
        List<String> got = ChildJvm.sharedOptions(List.of("-Xmx1g", "-XX:ActiveProcessorCount=1", "-Dfoo=1", "-XX:UseAVX=2", "-agentlib:jdwp=x"), p);
        assertEquals(List.of("-XX:ActiveProcessorCount=1", "-XX:UseAVX=2", "-Dtornadomla.fast.touch=false"), got);
    }
}
