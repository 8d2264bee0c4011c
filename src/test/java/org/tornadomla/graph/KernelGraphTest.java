package org.tornadomla.graph;

import org.tornadomla.cache.internal.CacheStorage;
import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.kernels.Projections;
import org.tornadomla.weights.MlaWeights;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KernelGraphTest {
    @Test
    void tasksAreCheckedAgainstTheKernelWhenTheGraphIsBuilt() {
        KernelGraph g = new KernelGraph("g");
        float[] x = g.input("x", new float[4]), w = g.weight("w", new float[8]), y = g.output("y", new float[2]);
        // argument count and types are checked by the compiler (KernelRef.K5); arrays must be buffers of the graph
        assertEquals("task g.p: argument 1 (w) of Projections.matVec must be a buffer of the graph of type float[], "
                        + "found float[] that is not a buffer of the graph",
                assertThrows(MlaException.class, () -> g.task("p", Projections::matVec, x, new float[8], y, 4, 2)).getMessage());
        assertEquals("task g.p: argument 3 (in) of Projections.matVec must be int, found null",
                assertThrows(MlaException.class, () -> g.task("p", Projections::matVec, x, w, y, null, 2)).getMessage());
        assertThrows(MlaException.class, () -> g.scratch("again", x));
        g.task("p", Projections::matVec, x, w, y, 4, 2);
        assertThrows(MlaException.class, () -> g.task("p", Projections::matVec, x, w, y, 4, 2));
        x[0] = 1;
        w[0] = 2;
        w[4] = 3;
        new JvmExecutor().execute(g);
        assertArrayEquals(new float[] {2, 3}, y);
    }

    @Test
    void aKernelIsAMethodReferenceToAPublicStaticMethod() {
        KernelGraph g = new KernelGraph("g");
        float[] x = g.input("x", new float[4]);
        KernelRef.K1<float[]> lambda = a -> a[0] = 1;
        String m = assertThrows(MlaException.class, () -> g.task("l", lambda, x)).getMessage();
        assertTrue(m.startsWith("a kernel must be a method reference to a public static method, such as Rope::rotatePairs; found a lambda"), m);
        String p = assertThrows(MlaException.class, () -> g.task("p", KernelGraphTest::notPublicKernel, x)).getMessage();
        assertEquals("kernel KernelGraphTest.notPublicKernel must be a public static void method of a public class", p);
        assertEquals("rmsNorm", ((KernelRef.K7<float[], Integer, float[], float[], Integer, Integer, Float>) org.tornadomla.kernels.Norms::rmsNorm)
                .method().getName());
    }

    static void notPublicKernel(float[] a) {
        a[0] = 2;
    }

    @Test
    void theLayerBuildsOneNamedGraphPerShapeAndReusesIt() {
        MlaLayer layer = new MlaLayer(MlaWeights.random(TestData.small(), 1));
        LatentCache cache = layer.newCache(1, 8, CacheDtype.F32);
        KernelGraph decode = layer.graph(cache, 1, AttentionOptions.of(AttentionPath.TILED));
        KernelGraph again = layer.graph(cache, 1, AttentionOptions.of(AttentionPath.TILED));
        // one graph per shape, reused: the copies handed out share its output buffer (their weights are copies)
        Object y = decode.buffers().stream().filter(bf -> bf.name().equals("y")).findFirst().orElseThrow().array();
        assertSame(y, again.buffers().stream().filter(bf -> bf.name().equals("y")).findFirst().orElseThrow().array());
        assertEquals("decode", decode.name());
        assertEquals(List.of("decode.q_a_proj", "decode.q_a_layernorm", "decode.q_b_proj", "decode.rope_q",
                        "decode.kv_a_proj_with_mqa", "decode.kv_a_layernorm", "decode.rope_k", "decode.cache_copy", "decode.cache_append",
                        "decode.absorb_q", "decode.split_tiles", "decode.combine", "decode.unabsorb_v", "decode.o_proj"),
                decode.tasks().stream().map(KernelGraph.Task::name).toList());
        KernelGraph prefill = layer.graph(cache, 4, AttentionOptions.of(AttentionPath.NAIVE));
        assertEquals("prefill", prefill.name());
        assertTrue(prefill.tasks().stream().anyMatch(t -> t.name().equals("prefill.decompress")));
        // the cache's storage is copied, not handed out: the copy declares no device-resident state
        assertEquals(List.of(), prefill.states());
        assertNull(prefill.buffer(CacheStorage.of(cache).floats()));
        KernelGraph.Buffer state = prefill.buffers().stream().filter(bf -> bf.name().equals("cache.0")).findFirst().orElseThrow();
        assertEquals(KernelGraph.Role.STATE, state.role());
        assertArrayEquals(CacheStorage.of(cache).floats(), (float[]) state.array());
        assertEquals(KernelGraph.Role.WEIGHT, prefill.buffers().stream().filter(bf -> bf.name().equals("kv_b_proj")).findFirst().orElseThrow().role());
    }
}
