package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.ladder.LadderSetup;
import org.tornadomla.ladder.LadderStep;
import org.tornadomla.ladder.Steps;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Step 7 of the ladder (the KernelContext kernel) on the device against step 1 on the JVM. */
class LadderOnTornadoTest {
    @Test
    void kernelContextStepMatchesStepOne() {
        LadderSetup s = new LadderSetup(8, 100, 5);
        LadderStep.Built first = Steps.all().get(0).build(s);
        new JvmExecutor().execute(first.graph());
        LadderStep.Built seven = Steps.all().get(6).build(s);
        try (TornadoExecutor dev = new TornadoExecutor(null, null, true)) {
            dev.execute(seven.graph());
        }
        double diff = 0;
        for (int i = 0; i < first.out().length; i++) diff = Math.max(diff, Math.abs(seven.out()[i] - first.out()[i]));
        assertTrue(diff < 1e-4, "step 7 vs step 1: " + diff);
    }
}
