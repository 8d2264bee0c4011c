/**
 * TornadoMLA: DeepSeek-V3's Multi-head Latent Attention as a Java library (see the {@link org.tornadomla}
 * package). The API is the exported packages; the kernels, the java-fast and TornadoVM backends' classes and the
 * {@code mla} command's tools are inside the module and reached through {@link org.tornadomla.backends.Backends}.
 *
 * <p>Only Gson is required. The Vector API ({@code jdk.incubator.vector}, the java-fast backend) and the tools'
 * libraries are optional ({@code requires static}): add them to the module graph to use them, for example
 * {@code --add-modules jdk.incubator.vector} for java-fast, or Jedis and its dependencies with {@code --add-modules ALL-MODULE-PATH} for
 * {@link org.tornadomla.store.RedisBlockStore}. TornadoVM's modules are read at run time, when the
 * {@code tornado} backend is created.
 */
module org.tornadomla {
    requires com.google.gson;

    // the java-fast backend: resolved only when the JVM adds it (--add-modules jdk.incubator.vector), so a
    // program that never uses java-fast neither needs the incubator module nor sees the JVM's warning about it
    requires static jdk.incubator.vector;
    // the Redis tier of the latent store (org.tornadomla.store.RedisBlockStore)
    requires static redis.clients.jedis;
    // the tools (cli, bench, analysis), which run on the class path from the shaded CLI jar
    requires static info.picocli;
    requires static org.jfree.jfreechart;
    requires static commons.math3;
    requires static java.desktop;
    requires static java.management;

    exports org.tornadomla;
    exports org.tornadomla.config;
    exports org.tornadomla.weights;
    exports org.tornadomla.attention;
    exports org.tornadomla.cache;
    exports org.tornadomla.backends;
    exports org.tornadomla.graph;
    exports org.tornadomla.store;
    exports org.tornadomla.parallel;

    // picocli sets the commands' option fields by reflection (for a run of org.tornadomla.cli.MlaCommand on the
    // module path; the shipped CLI runs on the class path)
    opens org.tornadomla.cli to info.picocli;
}
