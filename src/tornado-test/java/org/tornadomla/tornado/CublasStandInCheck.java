package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.Projections;
import uk.ac.manchester.tornado.api.TaskGraph;
import uk.ac.manchester.tornado.api.TornadoExecutionPlan;
import uk.ac.manchester.tornado.api.common.LibraryTaskDescriptor;
import uk.ac.manchester.tornado.api.common.TornadoFunctions;
import uk.ac.manchester.tornado.api.enums.DataTransferMode;
import uk.ac.manchester.tornado.api.types.arrays.FloatArray;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TornadoVM's cuBLAS tasks as the executor builds them ({@link CublasProjections#descriptor}), through TornadoVM's own
 * provider and JNI binding, on the compile gate's stand-ins with real copies ({@code STANDIN_CUDA_COPY=1}: the driver
 * stand-in moves the bytes, the cuBLAS stand-in computes each SGEMM on the host as cuBLAS defines it). This checks
 * what the JVM test cannot: that the arguments reach cublasSgemm_v2 / cublasSgemmStridedBatched in the order and form
 * given, and that the device pointers TornadoVM hands over are where the arrays' numbers start. Run by
 * tools/gpu/gate/compile-gate.sh on the CUDA route ({@code -Dtest=CublasStandInCheck}; the name keeps it out of the
 * suite's default run, where no stand-in is loaded). Compared with the plain kernels on the JVM within 1e-5 of the
 * largest output.
 */
@EnabledIfEnvironmentVariable(named = "STANDIN_CUDA_COPY", matches = "1")
class CublasStandInCheck {
    private static float[] gaussian(Random rnd, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) rnd.nextGaussian();
        return x;
    }

    /** C = the SGEMM g of twin A and activations B, run as one library task between copies. */
    private static float[] onDevice(CublasProjections.Gemm g, float[] a, float[] b, int cLength) {
        // C starts as zeros on the device (a NaN put into it on the host did not reach the stand-in): a number the SGEMM
        // does not write reads 0 and fails unless its reference, a sum of Gaussian products, lies within the tolerance of 0
        FloatArray na = FloatArray.fromArray(a), nb = FloatArray.fromArray(b), nc = new FloatArray(cLength);
        TornadoFunctions.LibraryTask1<LibraryTaskDescriptor> same = d -> d;
        TaskGraph tg = new TaskGraph("cublas_standin")
                .transferToDevice(DataTransferMode.FIRST_EXECUTION, na, nb, nc)
                .libraryTask("sgemm", same, CublasProjections.descriptor(g, na, nb, nc))
                .transferToHost(DataTransferMode.EVERY_EXECUTION, nc);
        try (TornadoExecutionPlan plan = new TornadoExecutionPlan(tg.snapshot())) {
            plan.execute();
        } catch (Exception e) {
            throw new AssertionError("the cuBLAS task did not run on the stand-in: " + e, e);
        }
        return nc.toHeapArray();
    }

    private static void assertClose(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        double max = 0;
        for (float e : expected) max = Math.max(max, Math.abs(e));
        assertTrue(max > 0, what + ": an all-zero reference proves nothing");
        for (int i = 0; i < expected.length; i++) assertEquals(expected[i], actual[i], 1e-5 * max, what + " at " + i);
    }

    @Test
    void linearGoesThroughCublasSgemm() {
        int rows = 130, in = 70, out = 50;
        Random rnd = new Random(1);
        float[] x = gaussian(rnd, rows * in), w = gaussian(rnd, out * in), y = new float[rows * out];
        Projections.matMul(x, w, y, rows, in, out);
        assertClose(y, onDevice(CublasProjections.Gemm.linear(rows, in, out), w, x, y.length), "linear");
    }

    @Test
    void absorbAndUnabsorbGoThroughCublasSgemmStridedBatched() {
        int rows = 129, heads = 3, dn = 16, dr = 8, dv = 12, dc = 40;
        Random rnd = new Random(2);
        float[] wkvB = gaussian(rnd, heads * (dn + dv) * dc);
        float[] q = gaussian(rnd, rows * heads * (dn + dr)), qLat = new float[rows * heads * dc];
        Absorb.absorbQuery(q, wkvB, qLat, rows, heads, dn, dr, dv, dc);
        float[] wuk = new float[heads * dn * dc], wuv = new float[heads * dv * dc];
        for (int h = 0; h < heads; h++) {
            System.arraycopy(wkvB, h * (dn + dv) * dc, wuk, h * dn * dc, dn * dc);
            System.arraycopy(wkvB, (h * (dn + dv) + dn) * dc, wuv, h * dv * dc, dv * dc);
        }
        assertClose(qLat, onDevice(CublasProjections.Gemm.absorbQuery(rows, heads, dn, dr, dc), wuk, q, qLat.length), "absorb_q");
        float[] oLat = gaussian(rnd, rows * heads * dc), o = new float[rows * heads * dv];
        Absorb.unabsorbValue(oLat, wkvB, o, rows, heads, dn, dv, dc);
        assertClose(o, onDevice(CublasProjections.Gemm.unabsorbValue(rows, heads, dv, dc), wuv, oLat, o.length), "unabsorb_v");
    }
}
