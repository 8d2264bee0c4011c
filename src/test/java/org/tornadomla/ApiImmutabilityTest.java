package org.tornadomla;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.attention.SparseMla;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheIdentity;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeFrequencies;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.internal.Gaussians;
import org.tornadomla.io.Json;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.store.BlockKeys;
import org.tornadomla.store.BlockValue;
import org.tornadomla.store.LatentRows;
import org.tornadomla.weights.DType;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;
import org.tornadomla.weights.SafeTensorsWriter;
import org.tornadomla.weights.ShardedSafeTensors;
import org.tornadomla.weights.TensorInfo;
import org.tornadomla.weights.TensorSource;
import org.tornadomla.weights.Weight;
import org.tornadomla.weights.WeightDtype;

import java.io.IOException;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No public method of the API packages returns storage a caller can write: every public method that returns an
 * array or a buffer is found by reflection and either called (the result is scribbled over, then the method is
 * called again and must give what it gave before, in a new array) or listed with the reason its array is meant to
 * be written (the cache's storage, which kernels write). A new such method fails here until it is one or the other.
 */
class ApiImmutabilityTest {
    @TempDir
    Path dir;

    static final List<String> PACKAGES = List.of("org.tornadomla", "org.tornadomla.attention", "org.tornadomla.cache",
            "org.tornadomla.config", "org.tornadomla.weights", "org.tornadomla.graph", "org.tornadomla.io", "org.tornadomla.store", "org.tornadomla.parallel",
            "org.tornadomla.kernels", "org.tornadomla.fast", "org.tornadomla.cache.internal");

    /** Methods whose arrays are state meant to be written, with the reason. */
    static final Map<String, String> STATE = Map.of(
            "CacheStorage.floats()", "the cache's storage: kernels write it (internal, not exported)",
            "CacheStorage.halves()", "the cache's storage: kernels write it (internal)",
            "CacheStorage.bytes()", "the cache's storage: kernels write it (internal)",
            "CacheStorage.arrays()", "the cache's storage as DeviceResident state, for executors (internal)",
            "CacheStorage.indexKeys()", "a sparse cache's indexer keys: kernels write them (internal)",
            "CacheStorage.indexScales()", "a sparse cache's indexer key scales: kernels write them (internal)",
            "DeviceResident.arrays()", "device-resident state (a cache's storage), for executors",
            "BlockStore.exist(List)", "a server's answer, a new array per call (needs a Redis server; RedisLatentStoreTest)",
            "RedisBlockStore.exist(List)", "a server's answer, a new array per call (needs a Redis server; RedisLatentStoreTest)");

    static String key(Method m) {
        StringBuilder sb = new StringBuilder(m.getDeclaringClass().getSimpleName()).append('.').append(m.getName()).append('(');
        Class<?>[] p = m.getParameterTypes();
        for (int i = 0; i < p.length; i++) sb.append(i > 0 ? ", " : "").append(p[i].getSimpleName());
        return sb.append(')').toString();
    }

    /** Every public method of a public class of the API packages that returns an array or a java.nio.Buffer. */
    static List<Method> arrayReturning() throws Exception {
        Path classes = Path.of(MlaException.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Method> out = new ArrayList<>();
        try (Stream<Path> files = Files.walk(classes)) {
            // every class but the module descriptor (module-info.class, not a class)
            for (Path f : files.filter(x -> x.toString().endsWith(".class") && !x.endsWith("module-info.class")).sorted().toList()) {
                String name = classes.relativize(f).toString().replace(java.io.File.separatorChar, '.').replaceAll("\\.class$", "");
                Class<?> c = Class.forName(name, false, ApiImmutabilityTest.class.getClassLoader());
                if (!PACKAGES.contains(c.getPackageName()) || !Modifier.isPublic(c.getModifiers())) continue;
                if (c.getEnclosingClass() != null && !Modifier.isPublic(c.getEnclosingClass().getModifiers())) continue;
                for (Method m : c.getDeclaredMethods()) {
                    Class<?> r = m.getReturnType();
                    if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge()
                            && (r.isArray() || java.nio.Buffer.class.isAssignableFrom(r))) out.add(m);
                }
            }
        }
        return out;
    }

    @Test
    void writingWhatAPublicMethodReturnsChangesNothing() throws Exception {
        Map<String, Callable<Object>> calls = calls();
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (Method m : arrayReturning()) {
            String k = key(m);
            if (STATE.containsKey(k)) continue;
            Callable<Object> call = calls.get(k);
            if (call == null && Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0) call = () -> m.invoke(null);   // values(), pow2()
            if (call == null) {
                missing.add(k);
                continue;
            }
            Object first = call.call();
            Object before = copy(first);
            scribble(first);
            Object again = call.call();
            assertNotSame(first, again, k + " returned the same array twice");
            assertTrue(java.util.Objects.deepEquals(before, again), k + ": writing its result changed what it returns");
            checked++;
        }
        assertTrue(missing.isEmpty(), "public methods returning arrays that this test neither calls nor lists as state: " + new TreeSet<>(missing));
        assertTrue(checked >= 30, "checked " + checked);
    }

    /** How to call each method with arguments that give a non-trivial result. */
    private Map<String, Callable<Object>> calls() throws IOException {
        MlaConfig c = TestData.small();
        MlaWeights w = MlaWeights.random(c, 5);
        MlaLayer layer = new MlaLayer(w);
        float[] x1 = TestData.gaussian(1, c.hiddenSize()), x2 = TestData.gaussian(2, 2 * c.hiddenSize());
        LatentCache cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(32).numBlocks(8).blockSize(4).dtype(CacheDtype.F32).build());
        int s = cache.addSequence();
        cache.write(s, TestData.gaussian(3, 6 * c.kvLoraRank()), TestData.gaussian(4, 6 * c.qkRopeHeadDim()));
        LatentCache fp8 = new LatentCache(c, 1, 8, CacheDtype.FP8);
        fp8.write(0, TestData.gaussian(5, 3 * c.kvLoraRank()), TestData.gaussian(6, 3 * c.qkRopeHeadDim()));
        CacheStorage.Quantised q = CacheStorage.of(fp8).quantised(0);
        Weight f32 = w.kvB(), bf16 = w.kvB().to(WeightDtype.BF16);
        Path st = dir.resolve("t.safetensors");
        new SafeTensorsWriter().add("a", new long[] {2, 3}, new float[] {1, 2, 3, 4, 5, 6}).addBytes("b", DType.U8, new long[] {2}, new byte[] {7, 8}).write(st);
        Path index = dir.resolve("model.safetensors.index.json");
        Files.writeString(index, "{\"weight_map\":{\"a\":\"t.safetensors\",\"b\":\"t.safetensors\"}}");
        SafeTensorsFile file = SafeTensorsFile.open(st);
        ShardedSafeTensors sharded = ShardedSafeTensors.open(index);
        TensorInfo info = file.info("a");
        String sha = CacheIdentity.configHash(c);
        BlockKeys.Key blockKey = new BlockKeys("k:", "m", sha, CacheDtype.F32, 4).chain(new int[] {1, 2, 3, 4}, 0).get(0);
        byte[] rowBytes = new byte[4 * LatentRows.rowBytes(CacheDtype.F32, c.kvLoraRank(), c.qkRopeHeadDim())];
        new SplittableRandom(7).nextBytes(rowBytes);
        for (int i = 0; i < rowBytes.length; i += 4) rowBytes[i + 3] = 0x3F;             // finite floats
        LatentRows rows = new LatentRows(CacheDtype.F32, c.kvLoraRank(), c.qkRopeHeadDim(), 4, rowBytes);
        LatentRows int8 = new LatentRows(CacheDtype.INT8, c.kvLoraRank(), c.qkRopeHeadDim(), 1,
                new byte[LatentRows.rowBytes(CacheDtype.INT8, c.kvLoraRank(), c.qkRopeHeadDim())]);
        byte[] sparseBytes = new byte[2 * LatentRows.rowBytes(CacheDtype.BF16, c.kvLoraRank(), c.qkRopeHeadDim(), 128)];
        new SplittableRandom(8).nextBytes(sparseBytes);
        LatentRows sparseRows = new LatentRows(CacheDtype.BF16, c.kvLoraRank(), c.qkRopeHeadDim(), 128, 2, sparseBytes);
        BlockValue.Expected expected = BlockValue.Expected.of(layer.identity(), CacheDtype.F32, blockKey);
        AttentionOptions tiled = AttentionOptions.of(AttentionPath.TILED);

        Map<String, Callable<Object>> m = new LinkedHashMap<>();
        // each step on a fresh cache: the output must be the caller's own array, not a buffer of the layer's graph
        m.put("MlaLayer.decode(LatentCache, float[], AttentionPath)", () -> layer.decode(layer.newCache(1, 8, CacheDtype.F32), x1, AttentionPath.TILED));
        m.put("MlaLayer.prefill(LatentCache, float[], int, AttentionPath)", () -> layer.prefill(layer.newCache(1, 8, CacheDtype.F32), x2, 2, AttentionPath.ABSORBED));
        m.put("MlaLayer.forward(LatentCache, float[], int, AttentionOptions)", () -> layer.forward(layer.newCache(1, 8, CacheDtype.F32), x2, 2, tiled));
        m.put("MlaLayer.decode(LatentCache, float[], AttentionOptions)", () -> layer.decode(layer.newCache(1, 8, CacheDtype.F32), x1, tiled));
        m.put("MlaLayer.prefill(LatentCache, float[], int, AttentionOptions)", () -> layer.prefill(layer.newCache(1, 8, CacheDtype.F32), x2, 2, tiled));
        m.put("MlaLayer.forward(LatentCache, float[], int, AttentionPath)", () -> layer.forward(layer.newCache(1, 8, CacheDtype.F32), x2, 2, AttentionPath.NAIVE));
        m.put("MlaLayer.forward(LatentCache, float[], int[], int[], AttentionOptions)", () -> {
            LatentCache p = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(16).numBlocks(8).blockSize(4).dtype(CacheDtype.F32).build());
            return layer.forward(p, x2, new int[] {p.addSequence()}, new int[] {2}, tiled);
        });
        m.put("MlaLayer.forward(LatentCache, float[], int[], int[], AttentionPath)", () -> {
            LatentCache p = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(16).build());
            return layer.forward(p, x2, new int[] {p.addSequence()}, new int[] {2}, AttentionPath.ABSORBED);
        });
        m.put("LatentCache.sequences()", cache::sequences);
        int[] named = {CacheStorage.of(cache).slot(s, 0), -1, CacheStorage.of(cache).slot(s, 5)};
        SparseMla.Output selected = SparseMla.attend(cache, new int[] {s}, TestData.gaussian(8, 2 * (c.kvLoraRank() + c.qkRopeHeadDim())), 1, 2,
                named, 3, 0.1f);
        m.put("Output.out()", selected::out);
        m.put("Output.lse()", selected::lse);
        // the multi-device layers (each step on fresh caches, as for MlaLayer)
        List<org.tornadomla.graph.GraphExecutor> two = List.of(new org.tornadomla.graph.JvmExecutor(), new org.tornadomla.graph.JvmExecutor());
        org.tornadomla.parallel.TensorParallelLayer tp = new org.tornadomla.parallel.TensorParallelLayer(w, two);
        org.tornadomla.parallel.DataParallelLayers dp = new org.tornadomla.parallel.DataParallelLayers(w, two);
        PagedCacheSpec small = PagedCacheSpec.builder().maxSequences(2).maxSequenceLength(16).numBlocks(8).blockSize(4).dtype(CacheDtype.F32).build();
        float[] x4 = TestData.gaussian(7, 4 * c.hiddenSize());
        m.put("TensorParallelLayer.forward(TensorParallelCache, float[], int, AttentionOptions)", () -> tp.forward(tp.newCache(1, 8, CacheDtype.F32), x2, 2, tiled));
        m.put("TensorParallelLayer.forward(TensorParallelCache, float[], int, AttentionPath)", () -> tp.forward(tp.newCache(1, 8, CacheDtype.F32), x2, 2, AttentionPath.NAIVE));
        m.put("TensorParallelLayer.forward(TensorParallelCache, float[], int[], int[], AttentionOptions)", () -> {
            var p = tp.newPagedCache(small);
            return tp.forward(p, x2, new int[] {p.addSequence()}, new int[] {2}, tiled);
        });
        m.put("TensorParallelLayer.forward(TensorParallelCache, float[], int[], int[], AttentionPath)", () -> {
            var p = tp.newPagedCache(small);
            return tp.forward(p, x2, new int[] {p.addSequence()}, new int[] {2}, AttentionPath.ABSORBED);
        });
        var tpCache = tp.newPagedCache(small);
        tpCache.addSequence();
        m.put("TensorParallelCache.sequences()", tpCache::sequences);
        m.put("DataParallelLayers.forward(DataParallelCache, float[], int, AttentionOptions)", () -> dp.forward(dp.newCache(1, 8, CacheDtype.F32), x4, 2, tiled));
        m.put("DataParallelLayers.forward(DataParallelCache, float[], int, AttentionPath)", () -> dp.forward(dp.newCache(1, 8, CacheDtype.F32), x4, 2, AttentionPath.NAIVE));
        m.put("DataParallelLayers.forward(DataParallelCache, float[], int[], int[], AttentionOptions)", () -> {
            var p = dp.newPagedCache(small);
            return dp.forward(p, x2, new int[] {p.addSequence(1)}, new int[] {2}, tiled);
        });
        m.put("DataParallelLayers.forward(DataParallelCache, float[], int[], int[], AttentionPath)", () -> {
            var p = dp.newPagedCache(small);
            return dp.forward(p, x2, new int[] {p.addSequence(), p.addSequence()}, new int[] {1, 1}, AttentionPath.ABSORBED);
        });
        var dpCache = dp.newPagedCache(small);
        dpCache.addSequence(1);
        m.put("DataParallelCache.sequences()", dpCache::sequences);
        m.put("CacheStorage.latent(int)", () -> CacheStorage.of(cache).latent(s));
        m.put("CacheStorage.ropeKey(int)", () -> CacheStorage.of(cache).ropeKey(s));
        m.put("CacheStorage.blockTable(int)", () -> CacheStorage.of(cache).blockTable(s));
        m.put("LatentCache.latent(int)", () -> cache.latent(s));
        m.put("LatentCache.ropeKey(int)", () -> cache.ropeKey(s));
        m.put("LatentCache.blockTable(int)", () -> cache.blockTable(s));
        m.put("CacheStorage.allSequences()", () -> CacheStorage.of(fp8).allSequences());
        m.put("Quantised.values()", q::values);
        m.put("Quantised.scales()", q::scales);
        m.put("Quantised.rope()", q::rope);
        MlaConfig sparse = new MlaConfig(64, 2, 32, 32, 16, 16, 16, 10000, 1e-6, 4096, 1, null, false,
                new org.tornadomla.config.IndexerConfig(4, 128, 4, true, false));
        MlaLayer sparseLayer = new MlaLayer(MlaWeights.random(sparse, 6));
        LatentCache sc = sparseLayer.newCache(1, 8, CacheDtype.F32);
        sparseLayer.prefill(sc, TestData.gaussian(7, 3 * 64), 3, AttentionPath.ABSORBED);
        CacheStorage.IndexKeys ik = CacheStorage.of(sc).indexKeys(0);
        m.put("IndexKeys.codes()", ik::codes);
        m.put("IndexKeys.scales()", ik::scales);
        m.put("LatentCache.indexerKey(int)", () -> sc.indexerKey(0));
        m.put("MlaLayer.lastSelection()", sparseLayer::lastSelection);
        m.put("RopeFrequencies.inverseFrequencies(MlaConfig)", () -> RopeFrequencies.inverseFrequencies(TestData.yarn()));
        m.put("RopeFrequencies.correctionRange(MlaConfig)", () -> RopeFrequencies.correctionRange(TestData.yarn()));
        KernelGraph.Task task = layer.graph(fp8, 1, tiled).tasks().get(0);
        m.put("Task.args()", task::args);
        m.put("Json.readBytes(Path, long, String)", () -> Json.readBytes(index, 1000, "index"));
        m.put("Key.digest()", blockKey::digest);
        m.put("Expected.configSha()", expected::configSha);
        m.put("Expected.weightsSha()", expected::weightsSha);
        m.put("BlockValue.weightsSha(byte[])", () -> BlockValue.weightsSha(BlockValue.encode(layer.identity(), blockKey, rows)));
        m.put("BlockValue.encode(CacheIdentity, Key, LatentRows)", () -> BlockValue.encode(layer.identity(), blockKey, rows));
        m.put("BlockValue.encode(CacheIdentity, Key, LatentRows, int)", () -> BlockValue.encode(layer.identity(), blockKey, rows, 0));
        m.put("CacheIdentity.configShaBytes()", () -> layer.identity().configShaBytes());
        m.put("CacheIdentity.weightsShaBytes()", () -> layer.identity().weightsShaBytes());
        m.put("LatentRows.data()", rows::data);
        m.put("LatentRows.latent()", rows::latent);
        m.put("LatentRows.ropeKey()", rows::ropeKey);
        m.put("LatentRows.scales()", int8::scales);
        m.put("LatentRows.values()", int8::values);
        m.put("LatentRows.indexCodes()", sparseRows::indexCodes);
        m.put("LatentRows.indexScales()", sparseRows::indexScales);
        m.put("Tensor.shape()", () -> MlaWeights.tensors(c).get(0).shape());
        m.put("Gaussians.floats(SplittableRandom, int, double)", () -> Gaussians.floats(new SplittableRandom(1), 5, 1));
        m.put("SafeTensorsFile.readFloats(String)", () -> file.readFloats("a"));
        m.put("SafeTensorsFile.readBytes(String, DType)", () -> file.readBytes("b", DType.U8));
        m.put("ShardedSafeTensors.readFloats(String)", () -> sharded.readFloats("a"));
        m.put("ShardedSafeTensors.readBytes(String, DType)", () -> sharded.readBytes("b", DType.U8));
        m.put("TensorSource.readFloats(String)", () -> ((TensorSource) file).readFloats("a"));
        m.put("TensorSource.readBytes(String, DType)", () -> ((TensorSource) sharded).readBytes("b", DType.U8));
        m.put("TensorSource.readFloats(String, long[])", () -> file.readFloats("a", 2, 3));
        m.put("TensorInfo.shape()", info::shape);
        m.put("Weight.shape()", f32::shape);
        m.put("Weight.scaleShape(long, long)", () -> Weight.scaleShape(300, 200));
        m.put("Weight.toFloats()", bf16::toFloats);
        // an f32 weight as a buffer of a graph: a copy, so the weight (and what the next graph gets) stays as it was
        m.put("Weight.asF32(KernelGraph, String)", () -> f32.asF32(new KernelGraph("g"), "t"));
        return m;
    }

    private static Object copy(Object a) {
        if (a instanceof Object[] o) return o.clone();          // its elements as they are (a task's arguments: the graph's buffers)
        int n = Array.getLength(a);
        Object c = Array.newInstance(a.getClass().componentType(), n);
        System.arraycopy(a, 0, c, 0, n);
        return c;
    }

    /** Changes every element (of an Object[]: replaces each by null). */
    private static void scribble(Object a) {
        switch (a) {
            case float[] f -> { for (int i = 0; i < f.length; i++) f[i] = f[i] + 1.5f; }
            case double[] d -> { for (int i = 0; i < d.length; i++) d[i] = d[i] + 1.5; }
            case int[] v -> { for (int i = 0; i < v.length; i++) v[i] = ~v[i]; }
            case long[] v -> { for (int i = 0; i < v.length; i++) v[i] = ~v[i]; }
            case short[] v -> { for (int i = 0; i < v.length; i++) v[i] = (short) ~v[i]; }
            case byte[] v -> { for (int i = 0; i < v.length; i++) v[i] = (byte) ~v[i]; }
            case boolean[] v -> { for (int i = 0; i < v.length; i++) v[i] = !v[i]; }
            case Object[] o -> java.util.Arrays.fill(o, null);
            default -> throw new AssertionError("not an array: " + a);
        }
    }

    /**
     * A layer's graph hands out no cache storage: writing its STATE buffers, or running it, leaves the cache's rows and
     * length alone, and the next step gives what it gives on an untouched cache (the buffers once were the cache's own
     * arrays: NaN written there reached every later step, and a run appended rows while the length stayed).
     */
    @Test
    void aLayersGraphHandsOutNoCacheStorage() {
        MlaConfig c = TestData.small();
        MlaWeights w = MlaWeights.random(c, 8);
        float[] x = TestData.gaussian(10, 3 * c.hiddenSize()), next = TestData.gaussian(11, c.hiddenSize());
        for (AttentionPath path : AttentionPath.values()) {
            MlaLayer layer = new MlaLayer(w, new org.tornadomla.graph.JvmExecutor());
            LatentCache cache = layer.newCache(1, 8, CacheDtype.F32), clean = layer.newCache(1, 8, CacheDtype.F32);
            layer.prefill(cache, x, 3, path);
            layer.prefill(clean, x, 3, path);
            float[] rows = cache.latent(0);
            KernelGraph g = layer.graph(cache, 1, AttentionOptions.of(path));
            int states = 0;
            for (KernelGraph.Buffer b : g.buffers()) {
                if (b.role() == KernelGraph.Role.STATE) {
                    scribble(b.array());
                    states++;
                }
            }
            assertTrue(states > 0, "the graph has the cache's buffers");
            new org.tornadomla.graph.JvmExecutor().execute(g);
            assertArrayEquals(rows, cache.latent(0), path + ": the cache's rows");
            assertEquals(3, cache.length(0), path + ": the cache's length");
            assertArrayEquals(layer.decode(clean, next, path), layer.decode(cache, next, path), path + ": the next step");
        }
    }

    /**
     * Writing every weight buffer of a layer's graph, and the power-of-two table of a graph of one's own (every
     * graph has its own), changes nothing the layer, another layer or the weights compute.
     */
    @Test
    void writingAGraphsWeightBuffersChangesNoWeight() {
        MlaConfig c = TestData.small();
        float[] x = TestData.gaussian(9, c.hiddenSize());
        for (WeightDtype dt : WeightDtype.values()) {
            MlaWeights w = MlaWeights.random(c, 8).to(dt);
            MlaLayer layer = new MlaLayer(w), other = new MlaLayer(w);
            float[] weightValues = w.kvB().toFloats();
            for (AttentionPath path : AttentionPath.values()) {
                float[] expected = new MlaLayer(w).decode(new LatentCache(c, 1, 8, CacheDtype.BF16), x, path);
                LatentCache cache = layer.newCache(1, 8, CacheDtype.BF16);
                layer.decode(cache, x, path);                            // the layer's graph exists
                cache.truncate(0);
                KernelGraph g = layer.graph(cache, 1, AttentionOptions.of(path));
                for (KernelGraph.Buffer b : g.buffers()) if (b.role() == KernelGraph.Role.WEIGHT) scribble(b.array());
                KernelGraph mine = new KernelGraph("mine");
                w.kvA().project(mine, "p", mine.input("x", new float[c.hiddenSize()]), mine.output("y", new float[c.kvLoraRank() + c.qkRopeHeadDim()]), 1);
                mine.buffers().stream().filter(b -> b.name().equals("pow2")).forEach(b -> java.util.Arrays.fill((float[]) b.array(), 3f));
                assertArrayEquals(expected, layer.decode(cache, x, path), dt + " " + path + ": the layer after its graph's weights were written");
                assertArrayEquals(expected, other.decode(new LatentCache(c, 1, 8, CacheDtype.BF16), x, path), dt + " " + path + ": another layer");
                assertArrayEquals(weightValues, w.kvB().toFloats(), dt + ": the weight");
            }
            assertEquals(Bf16.pow2()[150], 1f);
        }
    }
}
