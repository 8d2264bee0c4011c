package org.tornadomla.ladder;

import org.tornadomla.bench.Timing;
import org.tornadomla.graph.GraphExecutor;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Runs the ladder's steps on one backend: each step's output against step 1's on the same executor (max abs
 * difference; a step with its own {@link LadderStep#reference}, against that), ms per decode step with the project's timing harness ({@link Timing}), and the cache bytes
 * the step reads. What {@code mla ladder} prints and what {@code mla ladder --docs} records.
 */
public final class LadderRun {
    private LadderRun() {
    }

    /** One step on one backend; ms is NaN when not timed, diff NaN when the step cannot run there. */
    public record Result(int step, String backend, double maxAbsDiff, double ms, double bytesRead) {
    }

    /**
     * @param plain         the executor for every step but the KernelContext one
     * @param kernelContext the executor for KernelContext steps (TornadoVM with its GPU kernels), or null: those
     *                      steps are reported as not run
     * @param step          only this step (null: all)
     */
    public static List<Result> run(String backend, GraphExecutor plain, GraphExecutor kernelContext, LadderSetup s, Integer step,
                                   double budgetMs, Consumer<Result> progress) {
        List<Result> out = new ArrayList<>();
        float[] reference = output(Steps.all().get(0), s, plain, 0)[0];
        for (LadderStep st : Steps.all()) {
            if (step != null && st.number() != step) continue;
            Result r;
            if (st.tornadoOnly() && kernelContext == null) {
                r = new Result(st.number(), backend, Double.NaN, Double.NaN, st.bytesRead(s));
            } else {
                GraphExecutor ex = st.tornadoOnly() ? kernelContext : plain;
                float[][] o = output(st, s, ex, budgetMs);
                LadderStep.Built own = st.reference(s);
                float[] expected = reference;
                if (own != null) {
                    ex.execute(own.graph());
                    expected = own.out().clone();
                    ex.release(own.graph());
                }
                double diff = 0;
                for (int i = 0; i < expected.length; i++) diff = Math.max(diff, Math.abs((double) o[0][i] - expected[i]));
                r = new Result(st.number(), backend, diff, o[1][0], st.bytesRead(s));
            }
            out.add(r);
            progress.accept(r);
        }
        return out;
    }

    /** {output, {ms per step}}: one run for the output, then the timing harness. */
    private static float[][] output(LadderStep st, LadderSetup s, GraphExecutor ex, double budgetMs) {
        LadderStep.Built b = st.build(s);
        ex.execute(b.graph());
        float[] out = b.out().clone();
        double ms = budgetMs > 0 ? Timing.measure(() -> ex.execute(b.graph()), budgetMs, 2).meanMs() : Double.NaN;
        ex.release(b.graph());
        return new float[][] {out, {(float) ms}};
    }
}
