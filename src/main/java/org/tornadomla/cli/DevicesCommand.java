package org.tornadomla.cli;

import org.tornadomla.backends.Backends;

import picocli.CommandLine.Command;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** Lists TornadoVM's devices as "backend:device", or says that no TornadoVM is installed. */
@Command(name = "devices", mixinStandardHelpOptions = true,
        description = "List the TornadoVM devices (backend:device, name, memory) that --device accepts.")
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
