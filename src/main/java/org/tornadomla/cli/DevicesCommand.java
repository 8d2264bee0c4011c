package org.tornadomla.cli;

import org.tornadomla.backends.Backends;

import picocli.CommandLine.Command;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** Lists the backends this JVM can run: the two JVM ones, then TornadoVM's devices as "backend:device", or why there are none. */
@Command(name = "devices", mixinStandardHelpOptions = true,
        description = {"List the backends this JVM can run: java-reference and java-fast (--backend names them), then each TornadoVM "
                + "device (backend:device, name, memory: --backend tornado:B:D or --device B:D names one), or why there is none."})
public final class DevicesCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        out.println("java-reference  the JVM: reference kernels, sequential (always available)");
        out.println("java-fast       the JVM: " + (org.tornadomla.fast.FastExecutor.available()
                ? new org.tornadomla.fast.FastExecutor().device() : "not available (needs --add-modules jdk.incubator.vector)"));
        try {
            for (String d : Backends.tornadoDevices()) out.println(d);
        } catch (org.tornadomla.MlaException e) {
            out.println("tornado none: " + e.getMessage());
        }
        return 0;
    }
}
