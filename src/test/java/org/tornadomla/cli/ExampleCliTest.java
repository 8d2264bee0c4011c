package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.TestData;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.attention.MlaLayer;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;
import org.tornadomla.weights.SafeTensorsFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** mla example writes a checkpoint run-layer runs as it stands, whose outputs the library computes too. */
class ExampleCliTest {
    @TempDir
    Path dir;

    @Test
    void runLayerRunsTheExampleAndAgreesWithTheLibrary() throws IOException {
        Path ex = dir.resolve("ex");
        CliTest.Run made = CliTest.mla("example", ex.toString(), "--hidden", "256", "--prompt", "5", "--decode", "2");
        assertEquals(0, made.code(), made.err());
        // no launcher property in this JVM (the mla script passes one): the line names the command mla
        assertTrue(made.out().contains("try: mla run-layer --config " + ex.resolve("config.json")), made.out());

        Path out = ex.resolve("out.safetensors");
        CliTest.Run ran = CliTest.mla("run-layer", "--config", ex.resolve("config.json").toString(), "--weights",
                ex.resolve("model.safetensors").toString(), "--input", ex.resolve("in.safetensors").toString(), "--output", out.toString());
        assertEquals(0, ran.code(), ran.err());

        // the same step through the library, from the files the command wrote
        MlaConfig c = MlaConfig.load(ex.resolve("config.json"));
        assertEquals(256, c.hiddenSize());
        assertEquals(MlaConfig.preset("deepseek-v2-lite").kvLoraRank(), c.kvLoraRank());
        MlaLayer layer = new MlaLayer(MlaWeights.load(ex.resolve("model.safetensors"), c, 0));
        try (SafeTensorsFile in = SafeTensorsFile.open(ex.resolve("in.safetensors"));
             SafeTensorsFile o = SafeTensorsFile.open(out)) {
            LatentCache cache = layer.newCache(1, 7, CacheDtype.F32);
            float[] pre = layer.prefill(cache, in.readFloats("prefill_input"), 5, AttentionPath.ABSORBED);
            TestData.assertClose(pre, o.readFloats("prefill_output", 1, 5, 256), 1e-5, "prefill_output");
            for (int k = 0; k < 2; k++) {
                float[] y = layer.decode(cache, in.readFloats("decode_input_" + k), AttentionPath.ABSORBED);
                TestData.assertClose(y, o.readFloats("decode_output_" + k, 1, 1, 256), 1e-5, "decode_output_" + k);
            }
        }

        // run-layer again over its own output: replaced; over a file it did not write (another checkpoint, notes): refused, untouched
        ran = CliTest.mla("run-layer", "--config", ex.resolve("config.json").toString(), "--weights",
                ex.resolve("model.safetensors").toString(), "--input", ex.resolve("in.safetensors").toString(), "--output", out.toString());
        assertEquals(0, ran.code(), ran.err());
        Path other = dir.resolve("other.safetensors"), notes = dir.resolve("notes.txt");
        Files.copy(ex.resolve("model.safetensors"), other);
        Files.writeString(notes, "my notes\n");
        for (Path p : new Path[] {other, notes}) {
            byte[] was = Files.readAllBytes(p);
            CliTest.Run over = CliTest.mla("run-layer", "--config", ex.resolve("config.json").toString(), "--weights",
                    ex.resolve("model.safetensors").toString(), "--input", ex.resolve("in.safetensors").toString(), "--output", p.toString());
            assertEquals(2, over.code(), over.err());
            assertTrue(over.err().contains("--output " + p + " exists and is not a file mla run-layer wrote"), over.err());
            assertTrue(java.util.Arrays.equals(was, Files.readAllBytes(p)), p + " changed");
        }

        // a second time into the same folder: refused, the files as they were
        byte[] config = Files.readAllBytes(ex.resolve("config.json"));
        CliTest.Run again = CliTest.mla("example", ex.toString());
        assertEquals(2, again.code());
        assertTrue(again.err().contains("config.json exists"), again.err());
        assertEquals(new String(config), Files.readString(ex.resolve("config.json")));
    }

    @Test
    void theSuggestedLineRunsFromWhereTheUserIs() {
        String before = System.getProperty("tornadomla.launcher");
        try {
            System.setProperty("tornadomla.launcher", "../main/mla");
            assertEquals("../main/mla", ExampleCommand.launcher());
        } finally {
            if (before == null) System.clearProperty("tornadomla.launcher");
            else System.setProperty("tornadomla.launcher", before);
        }
        // a POSIX shell reads each back as the one word it was
        assertEquals("/tmp/ex/config.json", ExampleCommand.shellWord("/tmp/ex/config.json"));
        assertEquals("'/tmp/my ex/config.json'", ExampleCommand.shellWord("/tmp/my ex/config.json"));
        assertEquals("'it'\\''s'", ExampleCommand.shellWord("it's"));
        assertEquals("''", ExampleCommand.shellWord(""));
    }
}
