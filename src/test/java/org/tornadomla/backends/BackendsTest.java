package org.tornadomla.backends;

import org.junit.jupiter.api.Test;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.fast.FastExecutor;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BackendsTest {
    @Test
    void namesGiveTheirExecutors() {
        assertInstanceOf(JvmExecutor.class, Backends.create("java-reference"));
        assertInstanceOf(JvmExecutor.class, Backends.create("java"));
        try (GraphExecutor fast = Backends.create("java-fast"); GraphExecutor three = Backends.create("java-fast:3");
             GraphExecutor two = Backends.create("java-fast", new Backends.Options(2, null, true))) {
            assertInstanceOf(FastExecutor.class, fast);
            assertEquals(3, three.parallelism());
            assertEquals(2, two.parallelism());
            // the executor a name gives runs a layer to the reference's result
            MlaWeights w = MlaWeights.random(TestData.small(), 3);
            float[] x = TestData.gaussian(5, 3 * TestData.small().hiddenSize());
            MlaLayer ref = new MlaLayer(w), viaName = new MlaLayer(w, three);
            TestData.assertClose(ref.prefill(ref.newCache(1, 4, CacheDtype.F32), x, 3, AttentionPath.TILED),
                    viaName.prefill(viaName.newCache(1, 4, CacheDtype.F32), x, 3, AttentionPath.TILED), 1e-5, "java-fast:3");
        }
    }

    @Test
    void badNamesAreOneLineNamingTheChoices() {
        String m = assertThrows(MlaException.class, () -> Backends.create("cuda")).getMessage();
        assertEquals("unknown backend 'cuda' (expected java-reference, java-fast, java-fast:N, tornado, tornado:B:D)", m);
        assertTrue(assertThrows(MlaException.class, () -> Backends.create("java-fast:x")).getMessage().contains("thread count"));
        assertThrows(MlaException.class, () -> Backends.create("java-fast:0"));
        assertThrows(NullPointerException.class, () -> Backends.create(null));
        if (System.getenv("TORNADOVM_HOME") == null) {
            assertTrue(assertThrows(MlaException.class, () -> Backends.create("tornado")).getMessage().startsWith("no TornadoVM installed"));
        }
    }

    @Test
    void aMissingNativeLibraryIsNamedWithWhatTheSdkNeeds(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws java.io.IOException {
        java.nio.file.Path cuda = dir.resolve("cuda"), ptx = dir.resolve("ptx"), opencl = dir.resolve("opencl");
        for (java.nio.file.Path sdk : new java.nio.file.Path[] {cuda, ptx, opencl}) java.nio.file.Files.createDirectories(sdk.resolve("lib"));
        java.nio.file.Files.writeString(cuda.resolve("lib/libtornado-cuda.so"), "");
        java.nio.file.Files.writeString(ptx.resolve("lib/libtornado-ptx.so"), "");
        Throwable link = new ExceptionInInitializerError(new UnsatisfiedLinkError("libnvrtc.so.13: cannot open shared object file"));
        String c = Backends.nativeLibraryHint(cuda.toString(), link);
        assertTrue(c.contains("libcuda.so.1") && c.contains("libnvrtc.so.13") && c.contains("cuda-pip-env.sh"), c);
        String p = Backends.nativeLibraryHint(ptx.toString(), new UnsatisfiedLinkError("libcuda.so.1"));
        assertTrue(p.contains("libcuda.so.1") && !p.contains("nvrtc"), p);
        // no hint where a library does not explain the failure, or for an SDK without an NVIDIA backend
        assertEquals(null, Backends.nativeLibraryHint(cuda.toString(), new IllegalStateException("other")));
        assertEquals(null, Backends.nativeLibraryHint(opencl.toString(), link));
        assertEquals(null, Backends.nativeLibraryHint(null, link));
        assertEquals("java.lang.ExceptionInInitializerError (cause: java.lang.UnsatisfiedLinkError: libnvrtc.so.13: cannot open shared object file)",
                Backends.describe(link));
    }
}
