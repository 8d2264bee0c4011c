package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.store.RedisServer;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code mla pd-demo} and {@code mla store-bench} against a real redis-server (skipped when it is not
 * installed; .ci/run installs it and requires this class to have run). pd-demo starts its decode process as a
 * second JVM on the test's class path.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PdDemoCliTest {
    @Test
    void theDecodeProcessContinuesBitForBitAndAStoppedServerIsOneLine() throws Exception {
        String uri;
        try (RedisServer s = RedisServer.start("64mb")) {
            uri = s.uri();
            for (String dtype : new String[] {"bf16", "fp8"}) {
                CliTest.Run r = CliTest.mla("pd-demo", "--store", uri, "--tokens", "70", "--steps", "2", "--layers", "2", "--heads", "2",
                        "--hidden", "128", "--dtype", dtype);
                assertEquals(0, r.code(), r.out() + r.err());
                String out = r.out();
                assertTrue(out.contains("with 2 heads and hidden size 128 (V3: 128 and 7168, reduced so the demo runs in seconds)"), out);
                assertTrue(out.contains("pushed 4 blocks"), out);   // 70 tokens: a full block of 64 and a partial one, in 2 layers
                assertTrue(out.contains("decode process (pid ") && out.contains("a second JVM, a paged cache of blocks of 64): pulled 70 tokens (4 blocks"), out);
                assertEquals(2, out.lines().filter(l -> l.contains("output identical to the single-process run (128 numbers, bit for bit)")).count(), out);
                assertTrue(out.contains("the decode process's outputs equal the single-process run in all 2 steps, bit for bit"), out);
                assertTrue(out.contains("MHA with this geometry would move 2 layers × 2 heads × (192 + 128) numbers"), out);
                assertTrue(out.contains("DeepSeek-V3 itself (61 layers, 128 heads), " + dtype + ": MLA " + (dtype.equals("fp8") ? "40,016" : "70,272") + " B per token"), out);
                // the demo takes its blocks away again: the server holds no key after it
                assertTrue(out.contains("removed the demo's 4 blocks from the store (--keep leaves them)"), out);
                assertEquals("0", s.command("DBSIZE").strip(), out);
            }
            // with --keep they stay, one key per block
            CliTest.Run kept = CliTest.mla("pd-demo", "--store", uri, "--tokens", "70", "--steps", "1", "--layers", "2", "--heads", "2",
                    "--hidden", "128", "--keep");
            assertEquals(0, kept.code(), kept.out() + kept.err());
            assertFalse(kept.out().contains("removed the demo's"), kept.out());
            assertEquals("4", s.command("DBSIZE").strip());
            assertEquals("OK", s.command("FLUSHALL").strip());
            // a sparse layer (DeepSeek-V3.2's indexer, top 16 of 70): the indexer's keys travel too, and the decode
            // process selects and attends as the single process does
            CliTest.Run sp = CliTest.mla("pd-demo", "--store", uri, "--tokens", "70", "--steps", "2", "--layers", "2", "--heads", "2",
                    "--hidden", "128", "--dtype", "bf16", "--index-topk", "16");
            assertEquals(0, sp.code(), sp.out() + sp.err());
            assertTrue(sp.out().contains("sparse (DeepSeek-V3.2's DSA): an indexer of 64 heads x 128 keeps the top 16 positions"), sp.out());
            assertEquals(2, sp.out().lines().filter(l -> l.contains("output identical to the single-process run (128 numbers, bit for bit)")).count(), sp.out());
            assertTrue(sp.out().contains("(1,284 B of rows in bf16 with the indexer key"), sp.out());   // 1,152 of latent + 128 codes + 4 of scale
            CliTest.Run b = CliTest.mla("store-bench", "--store", uri, "--tokens", "100", "--dtype", "bf16,fp8", "--warmup", "0", "--runs", "1");
            assertEquals(0, b.code(), b.out() + b.err());
            assertTrue(b.out().lines().anyMatch(l -> l.matches("bf16 +100 +1152 +0\\.1 .*")), b.out());
            assertTrue(b.out().lines().anyMatch(l -> l.matches("fp8 +100 +656 +0\\.1 .*")), b.out());
            assertTrue(b.out().contains("each row: no warm-up, then the median of 1 timed runs"), b.out());
        }
        // the server is gone now
        CliTest.Run r = CliTest.mla("pd-demo", "--store", uri, "--tokens", "70", "--steps", "2", "--heads", "2", "--hidden", "128");
        assertEquals(2, r.code(), r.out() + r.err());
        assertEquals("", r.out());
        assertEquals("mla: error: " + uri + ": cannot reach the server: connection refused (is the server running and listening there?)", r.err().strip());
    }

    @Test
    void acrossAPasswordProtectedRedisCluster(@TempDir Path dir) throws Exception {
        String password = "pd-Cluster-pw9";
        List<RedisServer> nodes = RedisServer.startCluster(3, password, dir);
        try {
            String seeds = RedisServer.seeds(nodes, password);
            CliTest.Run r = CliTest.mla("pd-demo", "--store", seeds, "--tokens", "150", "--steps", "2", "--layers", "2", "--heads", "2",
                    "--hidden", "128", "--block-size", "16");
            assertEquals(0, r.code(), r.out() + r.err());
            assertTrue(r.out().contains("the decode process's outputs equal the single-process run in all 2 steps, bit for bit"), r.out());
            assertTrue(!r.out().contains(password) && !r.err().contains(password), "the password shows: " + r.out() + r.err());
            assertTrue(r.out().contains("redis://:***@127.0.0.1:" + nodes.get(0).port()), r.out());
            CliTest.Run wrong = CliTest.mla("pd-demo", "--store", RedisServer.seeds(nodes, "not-" + password), "--tokens", "70", "--steps", "1",
                    "--heads", "2", "--hidden", "128");
            assertEquals(2, wrong.code(), wrong.out() + wrong.err());
            assertEquals(1, wrong.err().strip().lines().count(), wrong.err());
            assertTrue(wrong.err().contains("login refused") && !wrong.err().contains(password), wrong.err());
        } finally {
            for (RedisServer n : nodes) n.close();
        }
    }
}
