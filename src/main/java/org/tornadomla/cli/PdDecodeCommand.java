package org.tornadomla.cli;

import org.tornadomla.MlaException;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.store.LatentCacheRows;
import org.tornadomla.store.LatentStore;
import org.tornadomla.store.OnMissing;
import org.tornadomla.store.RedisBlockStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The decode process of {@code pd-demo} (hidden: {@link PdDemoCommand} starts it in a second JVM). Reads the
 * prompt's and the decode steps' token ids from stdin ("prompt id …" and "decode id …"), pulls the prompt's
 * caches (a missing block is an error: the prefill process has just pushed them), decodes, and writes one line
 * per result: "pulled TOKENS BLOCKS BYTES NANOS", then "y STEP BASE64" (the last layer's output, f32 little-endian).
 */
@Command(name = "pd-decode", hidden = true, description = "the decode process of pd-demo (started by it)")
public final class PdDecodeCommand implements Callable<Integer> {
    @Mixin
    PdOptions o;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        o.check();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        int[] prompt = ids(in.readLine(), "prompt", o.tokens), next = ids(in.readLine(), "decode", o.steps);
        try (RedisBlockStore redis = o.connect()) {
            LatentStore store = o.latentStore(redis);
            List<MlaLayer> layers = o.layers();
            List<LatentCache> caches = o.pagedCaches(layers, o.tokens + o.steps, o.cacheDtype());
            LatentStore.PullResult r = store.pull(prompt, 0, LatentCacheRows.of(caches), OnMissing.FAIL);
            out.printf("pulled %d %d %d %d%n", r.tokens(), r.transfer().blocks(), r.transfer().bytes(), r.transfer().nanos());
            for (int k = 0; k < o.steps; k++) {
                float[] y = o.forward(layers, caches, o.embed(new int[] {next[k]}), 1);
                ByteBuffer b = ByteBuffer.allocate(4 * y.length).order(ByteOrder.LITTLE_ENDIAN);
                b.asFloatBuffer().put(y);
                out.printf("y %d %s%n", k, Base64.getEncoder().encodeToString(b.array()));
            }
            out.flush();
            for (MlaLayer l : layers) l.close();
        }
        return 0;
    }

    /** "NAME id id …" with exactly n ids. */
    private static int[] ids(String line, String name, int n) {
        if (line == null || !line.startsWith(name + " ")) throw new MlaException("pd-decode: expected a line \"" + name + " <token ids>\" on stdin");
        try {
            int[] ids = Arrays.stream(line.substring(name.length() + 1).trim().split(" +")).mapToInt(Integer::parseInt).toArray();
            if (ids.length != n) throw new MlaException("pd-decode: " + n + " " + name + " token ids expected, found " + ids.length);
            return ids;
        } catch (NumberFormatException e) {
            throw new MlaException("pd-decode: the " + name + " line holds something that is not a token id");
        }
    }
}
