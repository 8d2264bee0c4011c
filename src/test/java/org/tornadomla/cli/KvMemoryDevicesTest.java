package org.tornadomla.cli;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.tornadomla.cli.CliTest.mla;

/** {@code kv-memory --devices}: the bytes per device of tensor- and data-parallel MLA, with DeepSeek-V3's numbers worked by hand. */
class KvMemoryDevicesTest {
    static String line(CliTest.Run r, String model, String mode, String dtype) {
        return r.out().lines().filter(l -> l.startsWith(model + " ") && l.contains(mode) && l.contains(" " + dtype + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("no line '" + mode + "' " + dtype + " in\n" + r.out()));
    }

    @Test
    void tensorParallelismDoesNotShrinkTheLatentPerDeviceDataParallelismDoes() {
        CliTest.Run r = mla("kv-memory", "--preset", "deepseek-v3", "--dtype", "bf16,fp8,int8", "--context", "4096", "--batch", "8", "--devices", "8");
        assertEquals(0, r.code(), r.err());
        // TP 8: 16 heads a device, every device holds all 8 requests' whole latent: 576 · 2 B · 61 = 70,272 B a token, 287.8 MB a request, 2.3 GB
        String tp = line(r, "deepseek-v3", "MLA TP 8 (16 heads each; the whole latent on each)", "bf16");
        assertTrue(tp.contains("70,272") && tp.contains("287.8 MB") && tp.contains("2.3 GB"), tp);
        // DP 8: one request a device, 287.8 MB
        String dp = line(r, "deepseek-v3", "MLA DP 8 (1 of the 8 requests each)", "bf16");
        assertTrue(dp.contains("70,272") && dp.trim().endsWith("287.8 MB"), dp);
        // MHA of the same geometry under TP 8: 16 heads · (192 + 128) · 2 B · 61 = 624,640 B a token a device
        String mha = line(r, "deepseek-v3", "MHA, same geometry, TP 8 (16 heads each)", "bf16");
        assertTrue(mha.contains("624,640"), mha);
        // fp8 as a device caches it: 512 e4m3 codes + 4 f32 scales (one per 128) + 64 bf16 rope numbers = 656 B a layer,
        // · 61 = 40,016 (not 576 · 61 = 35,136, one byte a number, which left the scales and the rope key out until 2026-12-07)
        assertTrue(line(r, "deepseek-v3", "MLA TP 8", "fp8").contains("40,016"), r.out());
        assertTrue(line(r, "deepseek-v3", "MLA DP 8", "fp8").contains("40,016"), r.out());
        // int8: 576 codes + 2 f32 scales (latent and rope key) = 584 B, · 61 = 35,624
        assertTrue(line(r, "deepseek-v3", "MLA TP 8", "int8").contains("35,624"), r.out());
        assertTrue(r.out().contains("TP sends x (7,168 numbers) to every device and gets 8 partial o_proj outputs (7,168 numbers each) back to sum; "
                + "DP moves only each device's own rows of x and y"), r.out());
        // DP with fewer requests than devices: ceil(3 / 2) = 2 a device
        CliTest.Run u = mla("kv-memory", "--preset", "deepseek-v2-lite", "--batch", "3", "--devices", "2");
        assertTrue(line(u, "deepseek-v2-lite", "MLA DP 2 (2 of the 3 requests each)", "bf16").length() > 0, u.out());
        // a head count that does not split, said so
        CliTest.Run odd = mla("kv-memory", "--preset", "deepseek-v3", "--devices", "3");
        assertTrue(line(odd, "deepseek-v3", "MLA TP 3 (128 heads do not split into 3; the whole latent on each)", "bf16").length() > 0, odd.out());
        assertEquals(2, mla("kv-memory", "--devices", "0").code());
    }
}
