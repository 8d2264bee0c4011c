package org.tornadomla.tornado;

import org.tornadomla.graph.KernelGraph;
import uk.ac.manchester.tornado.api.TornadoExecutionResult;
import uk.ac.manchester.tornado.api.TornadoProfilerResult;

import java.io.PrintWriter;

/** Prints TornadoVM's profiler figures of one execution (kernel, copy-in, copy-out, compile). */
final class Profiles {
    private Profiles() {
    }

    static void print(PrintWriter out, KernelGraph graph, TornadoExecutionResult result) {
        TornadoProfilerResult p = result.getProfilerResult();
        out.printf("  [profile %s] total %.3f ms: kernels %.3f ms, copy-in %.3f ms (%d B), copy-out %.3f ms (%d B), compile %.1f ms%n",
                graph.name(), p.getTotalTime() / 1e6, p.getDeviceKernelTime() / 1e6, p.getDeviceWriteTime() / 1e6,
                p.getTotalBytesCopyIn(), p.getDeviceReadTime() / 1e6, p.getTotalBytesCopyOut(), p.getCompileTime() / 1e6);
        String log = p.getProfileLog();
        if (log != null && !log.isBlank()) out.println("  [profile " + graph.name() + "] per task: " + log.replaceAll("\\s+", " "));
        out.flush();
    }
}
