package org.tornadomla.cli;

import org.tornadomla.bench.GpuReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/** Writes summary.md (and a chart) from the files the GPU kit's run.sh leaves in its output folder. */
@Command(name = "gpu-report", mixinStandardHelpOptions = true,
        description = "Write OUT/summary.md and OUT/" + GpuReport.CHART + " from the GPU kit's outputs in OUT (" + GpuReport.KIT_FILE_NAMES + "): tables of "
                + "the device, the checks and the timings, each naming the file and command it comes from.")
public final class GpuReportCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "OUT", description = "the kit's output folder")
    Path out;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        Path summary = GpuReport.write(out);
        spec.commandLine().getOut().printf("wrote %s%n", summary);
        return 0;
    }
}
