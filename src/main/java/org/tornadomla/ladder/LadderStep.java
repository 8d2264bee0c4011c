package org.tornadomla.ladder;

import org.tornadomla.graph.KernelGraph;

/** One rung of the kernel ladder: a decode step of the attention core built a particular way. */
public interface LadderStep {
    int number();

    String title();

    /** The kernel classes the step uses (its page shows TornadoVM's code for them). */
    String kernels();

    /** Builds the step's graph; the graph's OUTPUT is o [H, d_v] (or, for a step that stops early, what it ends with). */
    Built build(LadderSetup s);

    /**
     * The graph whose output this step must equal, run on the same executor, or null: step 1's. A step that attends
     * to other positions than step 1 (step 9, sparse) names its own.
     */
    default Built reference(LadderSetup s) {
        return null;
    }

    /** Bytes the step reads from its cache per decode step. */
    double bytesRead(LadderSetup s);

    /** Whether the step runs only on TornadoVM (KernelContext kernels have no JVM run). */
    default boolean tornadoOnly() {
        return false;
    }

    /** A built step: its graph and its output buffer. */
    record Built(KernelGraph graph, float[] out) {
    }
}
