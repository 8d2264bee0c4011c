package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.backends.Backends;
import org.tornadomla.bench.DecodeBench;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.fast.KernelChoices;
import org.tornadomla.graph.GraphExecutor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * One JVM of {@code mla tune} (hidden: {@link TuneCommand} starts it with the kernel choices to try as system
 * properties). Prints the machine's signature and the choices in effect, then the median ms per decode step of each
 * shape on java-fast, one "key value" line each.
 */
@Command(name = "tune-probe", hidden = true, description = "one measurement of mla tune (started by it)")
public final class TuneProbeCommand implements Callable<Integer> {
    @Option(names = "--shapes", split = ",", description = "BxHxT:path, e.g. 1x128x4096:absorbed")
    List<String> shapes = List.of();

    @Option(names = "--budget-ms", defaultValue = "1000")
    double budgetMs;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (!FastExecutor.available()) throw new MlaException("tune-probe: java-fast needs the JDK's Vector API (--add-modules jdk.incubator.vector)");
        out.println("signature " + KernelChoices.signature());
        for (Map.Entry<String, Object> e : FastExecutor.choicesInEffect().entrySet()) out.println("choice " + e.getKey() + " " + e.getValue());
        out.flush();
        GraphExecutor fast = Backends.create("java-fast");
        for (String s : shapes) {
            DecodeBench.Shape shape = parse(s);
            DecodeBench bench = new DecodeBench(shape, 1);
            double ms = bench.time(fast, budgetMs, 5).medianMs();
            bench.release(fast);
            out.println("ms " + s + " " + ms);
            out.flush();
        }
        return 0;
    }

    /** "BxHxT:path" as an f32 shape. */
    static DecodeBench.Shape parse(String s) {
        String[] pf = s.split(":");
        String[] n = pf[0].split("x");
        if (pf.length != 2 || n.length != 3) throw new MlaException("tune-probe: a shape is BxHxT:path, found \"" + s + "\"");
        try {
            return new DecodeBench.Shape(AttentionPath.parse(pf[1]), CacheDtype.F32, Integer.parseInt(n[0]), Integer.parseInt(n[1]), Integer.parseInt(n[2]));
        } catch (NumberFormatException e) {
            throw new MlaException("tune-probe: a shape is BxHxT:path, found \"" + s + "\"");
        }
    }
}
