package org.tornadomla.tornado;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonStreamParser;
import org.tornadomla.graph.KernelGraph;
import uk.ac.manchester.tornado.api.TornadoExecutionResult;
import uk.ac.manchester.tornado.api.TornadoProfilerResult;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Prints TornadoVM's profiler figures of one execution: totals, then each task's kernel time. */
final class Profiles {
    private Profiles() {
    }

    static void print(PrintWriter out, KernelGraph graph, TornadoExecutionResult result) {
        TornadoProfilerResult p = result.getProfilerResult();
        out.printf("  [profile %s] total %.3f ms: kernels %.3f ms, copy-in %.3f ms (%,d B), copy-out %.3f ms (%,d B), compile %.1f ms%n",
                graph.name(), p.getTotalTime() / 1e6, p.getDeviceKernelTime() / 1e6, p.getDeviceWriteTime() / 1e6,
                p.getTotalBytesCopyIn(), p.getDeviceReadTime() / 1e6, p.getTotalBytesCopyOut(), p.getCompileTime() / 1e6);
        List<String> tasks = taskTimes(p.getProfileLog(), graph.name());
        if (!tasks.isEmpty()) out.println("  [profile " + graph.name() + "] kernel ms: " + String.join(", ", tasks));
        out.flush();
    }

    /** "task 1.234" for each task of the last execution in TornadoVM's JSON profile log, slowest first. */
    static List<String> taskTimes(String log, String graphName) {
        List<Map.Entry<String, Double>> times = new ArrayList<>();
        if (log == null) return List.of();
        try {
            JsonObject last = null;
            for (JsonStreamParser ps = new JsonStreamParser(log); ps.hasNext(); ) {
                JsonElement e = ps.next();
                if (e.isJsonObject() && e.getAsJsonObject().has(graphName)) last = e.getAsJsonObject().getAsJsonObject(graphName);
            }
            if (last == null) return List.of();
            for (Map.Entry<String, JsonElement> t : last.entrySet()) {
                if (t.getValue().isJsonObject() && t.getValue().getAsJsonObject().has("TASK_KERNEL_TIME")) {
                    double ns = t.getValue().getAsJsonObject().get("TASK_KERNEL_TIME").getAsDouble();
                    times.add(Map.entry(t.getKey().substring(t.getKey().indexOf('.') + 1), ns / 1e6));
                }
            }
        } catch (JsonParseException | IllegalStateException | NumberFormatException e) {
            return List.of("(profile log not readable: " + e.getMessage() + ")");
        }
        times.sort(Map.Entry.<String, Double>comparingByValue().reversed());
        return times.stream().map(e -> String.format("%s %.3f", e.getKey(), e.getValue())).toList();
    }
}
