package org.tornadomla.cli;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.KvMemory;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.store.BlockValue;
import org.tornadomla.store.LatentCacheRows;
import org.tornadomla.store.LatentRows;
import org.tornadomla.store.LatentStore;
import org.tornadomla.store.RedisBlockStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Prefill in this JVM, decode in another: this process prefills a prompt through a few MLA layers, pushes
 * the latent caches to Redis and decodes on itself (the single-process reference); a second JVM it starts
 * ({@link PdDecodeCommand}) pulls the caches and decodes the same steps; its outputs must equal the
 * reference bit for bit (same backend, same cache bits).
 */
@Command(name = "pd-demo", mixinStandardHelpOptions = true,
        description = "Prefill/decode disaggregation over Redis: prefill in this JVM and push the latent caches, pull them in a second "
                + "JVM and decode there; prints per step that the outputs equal a single-process run, the bytes moved per token "
                + "(and what MHA would move) and the transfer GB/s. A small model by default (DeepSeek-V3's attention geometry, "
                + "16 heads, hidden 1024) so it runs in seconds. With --backend java-reference (the default) the outputs are identical bit for bit; "
                + "java-fast's vector sums may be ordered differently by a cold and a warm JVM, so it is compared within 1e-5 of the largest "
                + "magnitude. Without a reachable server: one line, exit code 2.")
public final class PdDemoCommand implements Callable<Integer> {
    /** java-fast: outputs of the two JVMs agree within this fraction of the largest magnitude (at least 1). */
    static final double FAST_TOLERANCE = 1e-5;

    @Mixin
    PdOptions o;

    @Option(names = "--decode-timeout-s", defaultValue = "600", description = "longest the decode process may take (default: ${DEFAULT-VALUE})")
    int decodeTimeoutS;

    @Option(names = "--keep", description = "leave the pushed blocks in the store afterwards (they expire after --ttl-s); by default "
            + "the demo removes them once the decode process is done, so that runs leave no keys behind")
    boolean keep;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        o.check();
        if (decodeTimeoutS < 1) throw new MlaException("--decode-timeout-s must be >= 1, found " + decodeTimeoutS);
        MlaConfig c = o.config(), v3 = MlaConfig.deepseekV3();
        CacheDtype dtype = o.cacheDtype();
        int[] prompt = PdOptions.tokenIds(o.seed, o.tokens), next = PdOptions.tokenIds(o.seed + 1, o.steps);
        try (RedisBlockStore redis = o.connect()) {   // first: an unreachable server is the first and only line
            LatentStore store = o.latentStore(redis);
            out.printf("pd-demo: DeepSeek-V3 attention geometry (kv_lora_rank %d, qk_rope_head_dim %d, q_lora_rank %d, qk_nope_head_dim %d, v_head_dim %d)%n",
                    c.kvLoraRank(), c.qkRopeHeadDim(), c.qLoraRank(), c.qkNopeHeadDim(), c.vHeadDim());
            out.printf("  with %d heads and hidden size %d%s; %d layer%s, each feeding the next, seeded random weights (seed %d)%n", c.numHeads(), c.hiddenSize(),
                    c.numHeads() == v3.numHeads() && c.hiddenSize() == v3.hiddenSize() ? "" : " (V3: " + v3.numHeads() + " and " + v3.hiddenSize() + ", reduced so the demo runs in seconds)",
                    o.layers, o.layers == 1 ? "" : "s", o.seed);
            out.printf("  cache %s, backend %s, path %s; store %s, blocks of %d tokens%n", dtype, o.backend, o.path, redis.address(), o.blockSize);
            if (c.sparse()) {
                out.printf("  sparse (DeepSeek-V3.2's DSA): an indexer of %d heads x %d keeps the top %d positions; its keys travel with the latent (+%d B per token and layer)%n",
                        c.indexer().nHeads(), c.indexer().headDim(), c.indexer().topK(), c.indexer().cacheBytesPerToken());
            }
            out.flush();

            // 1. the prefill process: prefill, push, then decode on as one process doing both (the reference)
            List<MlaLayer> layers = o.layers();
            List<LatentCache> caches = PdOptions.caches(layers, o.tokens + o.steps, dtype);
            long t0 = System.nanoTime();
            o.forward(layers, caches, o.embed(prompt), o.tokens);
            double prefillMs = (System.nanoTime() - t0) / 1e6;
            LatentStore.Transfer push = store.push(prompt, 0, LatentCacheRows.of(caches));
            try {
                return afterPush(out, c, v3, dtype, prompt, next, layers, caches, prefillMs, push);
            } finally {
                // the demo's blocks go, whatever happened after the push, unless asked to stay (a server gone by then: the
                // error that brought us here is the one to report, and the blocks expire after --ttl-s anyway)
                if (!keep) {
                    try {
                        store.remove(prompt, dtype, o.layers);
                        out.printf("removed the demo's %d blocks from the store (--keep leaves them)%n", push.blocks());
                    } catch (RuntimeException e) {
                        out.printf("could not remove the demo's blocks from the store (%s); %s%n", Messages.oneLine(e.getMessage()),
                                o.ttlSeconds > 0 ? "they expire after " + o.ttlSeconds + " s" : "they stay there (--ttl-s 0)");
                    }
                    out.flush();
                }
            }
        }
    }

    /** Everything after the push: the rest of the single process, the decode process, the comparison and the bytes moved. */
    private int afterPush(PrintWriter out, MlaConfig c, MlaConfig v3, CacheDtype dtype, int[] prompt, int[] next,
                          List<MlaLayer> layers, List<LatentCache> caches, double prefillMs, LatentStore.Transfer push)
            throws IOException, InterruptedException {
        out.printf("prefill process (pid %d): prefilled %d tokens in %.0f ms; pushed %d blocks, %,d B in %.1f ms: %.3f GB/s%n",
                ProcessHandle.current().pid(), o.tokens, prefillMs, push.blocks(), push.bytes(), push.nanos() / 1e6, push.gbPerSecond());
        out.flush();
        float[][] single = new float[o.steps][];
        for (int k = 0; k < o.steps; k++) single[k] = o.forward(layers, caches, o.embed(new int[] {next[k]}), 1);
        for (MlaLayer l : layers) l.close();

        // 2. the decode process: another JVM, which pulls and decodes the same steps
        Decoded d = runDecodeProcess(prompt, next);
        out.printf("decode process (pid %d, a second JVM, a paged cache of blocks of %d): pulled %d tokens (%d blocks, %,d B) in %.1f ms: %.3f GB/s (a small transfer; ./mla store-bench measures large ones)%n",
                d.pid, o.blockSize, d.tokens, d.blocks, d.bytes, d.nanos / 1e6, d.nanos == 0 ? 0 : (double) d.bytes / d.nanos);
        // java-reference is sequential Java: both JVMs compute bit for bit alike. java-fast's Vector API may add a
        // vector's lanes in another order once the JIT has compiled the loop, so two JVMs (one warm, one cold)
        // can differ in the last bits: compared within a stated tolerance instead.
        boolean exact = !o.backend.startsWith("java-fast");
        int differ = -1;
        double worst = 0;
        for (int k = 0; k < o.steps; k++) {
            float[] y = d.outputs.get(k);
            boolean same = Arrays.equals(toBits(single[k]), toBits(y));
            double diff = 0, scale = 1;
            for (int i = 0; i < y.length; i++) {
                diff = Math.max(diff, Math.abs((double) y[i] - single[k][i]));
                scale = Math.max(scale, Math.abs(single[k][i]));
            }
            worst = Math.max(worst, diff);
            boolean ok = same || (!exact && diff <= FAST_TOLERANCE * scale);
            if (!ok && differ < 0) differ = k;
            out.printf("  step %d (token id %d): %s%n", k, next[k], same ? String.format("output identical to the single-process run (%,d numbers, bit for bit)", y.length)
                    : ok ? String.format("output equal to the single-process run within %.0e of its largest magnitude (max |Δ| %.2e; java-fast, see --help)", FAST_TOLERANCE, diff)
                    : String.format("output DIFFERS from the single-process run: max |Δ| %.3e", diff));
        }

        // 3. what moved, against what MHA would move for the same model
        long rows = LatentRows.rowBytes(dtype, c.kvLoraRank(), c.qkRopeHeadDim(), c.sparse() ? c.indexer().headDim() : 0);
        double perToken = (double) push.bytes() / o.tokens;
        double header = perToken / o.layers - rows;
        int bytesPerNumber = KvMemory.bytes(dtype.toString());
        long mhaNumbers = KvMemory.schemes(KvMemory.Model.of("this model", c), 1).get(1).numbersPerTokenPerLayer();
        double mha = (double) mhaNumbers * bytesPerNumber * o.layers;
        out.printf("bytes moved per token: %,.1f B = %d layer%s × (%,d B of rows in %s + %.1f B of block header and checksum, %d B per block of %d)%n",
                perToken, o.layers, o.layers == 1 ? "" : "s", rows, dtype + (c.sparse() ? " with the indexer key" : ""), header, BlockValue.HEADER + BlockValue.TRAILER, o.blockSize);
        out.printf("  MHA with this geometry would move %d layer%s × %d heads × (%d + %d) numbers × %d B = %,.0f B per token: %.1f× more%n",
                o.layers, o.layers == 1 ? "" : "s", c.numHeads(), c.qkHeadDim(), c.vHeadDim(), bytesPerNumber, mha, mha / perToken);
        long v3Mla = dtype.bytesPerToken(v3.kvLoraRank(), v3.qkRopeHeadDim()) * v3.numHiddenLayers();
        long v3Mha = KvMemory.schemes(KvMemory.Model.of("deepseek-v3", v3), 1).get(1).numbersPerTokenPerLayer() * bytesPerNumber * v3.numHiddenLayers();
        out.printf("  DeepSeek-V3 itself (%d layers, %d heads), %s: MLA %,d B per token, MHA %,d B: %.1f× (./mla kv-memory)%n",
                v3.numHiddenLayers(), v3.numHeads(), dtype, v3Mla, v3Mha, (double) v3Mha / v3Mla);
        if (differ >= 0) {
            spec.commandLine().getErr().println(Messages.oneLine("mla: error: the decode process's outputs differ from the single-process run from step "
                    + differ + " on (max |Δ| " + String.format("%.3e", worst) + "): a bug"));
            return MlaCommand.INTERNAL_ERROR;
        }
        out.printf("the decode process's outputs equal the single-process run in all %d steps%s%n", o.steps, exact ? ", bit for bit" : "");
        return 0;
    }

    private static int[] toBits(float[] a) {
        int[] b = new int[a.length];
        for (int i = 0; i < a.length; i++) b[i] = Float.floatToRawIntBits(a[i]);
        return b;
    }

    /** What the decode process reported. */
    private record Decoded(long pid, int tokens, int blocks, long bytes, long nanos, List<float[]> outputs) {
    }

    /** Starts the decode process (same java, class path, heap and -XX: options), hands it the token ids and reads its report. */
    private Decoded runDecodeProcess(int[] prompt, int[] next) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(ChildJvm.java(), "-Xmx" + (Runtime.getRuntime().maxMemory() >> 20) + "m", "-Djava.awt.headless=true"));
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()) cmd.addAll(List.of("--add-modules", "jdk.incubator.vector"));
        cmd.addAll(ChildJvm.sharedOptions());                               // -XX: (processors, vector width) and java-fast's choices
        for (String k : System.getProperties().stringPropertyNames()) {   // TLS: the same trust store (a path; never a password's value)
            if (k.startsWith("javax.net.ssl.") && !k.toLowerCase(Locale.ROOT).contains("password")) cmd.add("-D" + k + "=" + System.getProperty(k));
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), MlaCommand.class.getName(), "pd-decode"));
        cmd.addAll(o.args());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put(PdOptions.STORE_ENV, o.storeUri());            // the address, password included, stays out of the process list
        Process p = pb.start();
        List<String> lines = Collections.synchronizedList(new ArrayList<>()), errors = Collections.synchronizedList(new ArrayList<>());
        Thread outReader = ChildJvm.drain(p.getInputStream(), lines), errReader = ChildJvm.drain(p.getErrorStream(), errors);
        try (Writer w = new java.io.OutputStreamWriter(p.getOutputStream(), StandardCharsets.US_ASCII)) {
            w.write("prompt " + Arrays.stream(prompt).mapToObj(Integer::toString).collect(Collectors.joining(" ")) + "\n");
            w.write("decode " + Arrays.stream(next).mapToObj(Integer::toString).collect(Collectors.joining(" ")) + "\n");
        } catch (IOException e) {
            // the process ended before reading its input: its own error says why (below)
        }
        if (!p.waitFor(decodeTimeoutS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new MlaException("the decode process did not finish within " + decodeTimeoutS + " s (--decode-timeout-s)");
        }
        outReader.join();
        errReader.join();
        if (p.exitValue() != 0) {
            String why = errors.stream().filter(l -> l.startsWith("mla: ")).reduce((a, b) -> b)
                    .orElse(errors.isEmpty() ? "no message" : errors.getLast());
            throw new MlaException("the decode process (pid " + p.pid() + ") failed with exit code " + p.exitValue() + ": "
                    + why.replaceFirst("^mla: (error: )?", ""));
        }
        long[] pulled = null;
        List<float[]> ys = new ArrayList<>();
        for (String l : lines) {
            String[] f = l.split(" ");
            if (f[0].equals("pulled") && f.length == 5) {
                pulled = new long[] {Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4])};
            } else if (f[0].equals("y") && f.length == 3 && Integer.parseInt(f[1]) == ys.size()) {
                ByteBuffer b = ByteBuffer.wrap(Base64.getDecoder().decode(f[2])).order(ByteOrder.LITTLE_ENDIAN);
                float[] y = new float[b.remaining() / 4];
                b.asFloatBuffer().get(y);
                ys.add(y);
            }
        }
        if (pulled == null || ys.size() != o.steps) {
            throw new IllegalStateException("the decode process reported " + (pulled == null ? "no pull" : ys.size() + " of " + o.steps + " steps"));
        }
        return new Decoded(p.pid(), (int) pulled[0], (int) pulled[1], pulled[2], pulled[3], ys);
    }
}
