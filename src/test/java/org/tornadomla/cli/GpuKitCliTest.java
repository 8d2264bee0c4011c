package org.tornadomla.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.bench.DecodeBench;
import org.tornadomla.bench.LayerCheck;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.GraphExecutor;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.graph.KernelGraph;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the GPU kit runs, on the JVM backends: mla check, bench --grid/--layer-only, gpu-report. */
class GpuKitCliTest {
    @TempDir
    Path dir;

    static final String CASE = "(PASS|FAIL) (naive|absorbed|tiled) (f32|bf16|int8|fp8) (plain|kernel-context)(\\+paged)? "
            + "max_abs_err=[0-9.e+-]+ max_rel_err=[0-9.e+-]+ tol=[0-9.e+-]+.*";

    private static CliTest.Run mla(String... args) {
        return CliTest.mla(args);
    }

    private static List<String> cases(String out) {
        return out.lines().filter(l -> l.startsWith("PASS ") || l.startsWith("FAIL ")).toList();
    }

    @Test
    void checkOnJavaFastPassesEveryPathAndDtypeAndFailsWithZeroTolerance() {
        String[] small = {"check", "--backend", "java-fast", "--hidden", "64", "--prefill", "2", "--steps", "1", "--batch", "2"};
        CliTest.Run r = mla(small);
        assertEquals(0, r.code(), r.out() + r.err());
        List<String> lines = cases(r.out());
        assertEquals(24, lines.size(), r.out());                      // 3 paths × 4 dtypes × (contiguous, paged), one kernel set on the JVM
        for (String l : lines) {
            assertTrue(l.matches(CASE), l);
            assertTrue(l.startsWith("PASS ") && (l.contains(" plain ") || l.contains(" plain+paged ")), l);
        }
        assertEquals(12, lines.stream().filter(l -> l.contains(" plain+paged ")).count(), r.out());
        assertTrue(r.out().contains("tokens cached before the prefill: 0, 3"), r.out());
        assertTrue(r.out().contains("24 PASS, 0 FAIL"), r.out());

        // java-fast sums in another order than the reference: not bit-equal, so a zero tolerance fails, exit code 1
        String[] zero = java.util.Arrays.copyOf(small, small.length + 6);
        System.arraycopy(new String[] {"--tol", "0", "--path", "tiled", "--cache-dtype", "f32"}, 0, zero, small.length, 6);
        CliTest.Run z = mla(zero);
        assertEquals(1, z.code(), z.out());
        assertEquals(List.of("FAIL", "FAIL"), cases(z.out()).stream().map(l -> l.substring(0, 4)).toList(), z.out());
    }

    /**
     * --sparse: a DeepSeek-V3.2 layer (indexer, top-4 below the context) on every path and cache dtype, contiguous and
     * paged; the tokens before the prefill come from a step of the layer, not from the host.
     */
    @Test
    void checkSparsePassesEveryPathAndDtype() {
        CliTest.Run r = mla("check", "--backend", "java-fast", "--sparse", "--hidden", "64", "--prefill", "3", "--steps", "2", "--batch", "2");
        assertEquals(0, r.code(), r.out() + r.err());
        List<String> lines = cases(r.out());
        assertEquals(24, lines.size(), r.out());
        for (String l : lines) assertTrue(l.startsWith("PASS ") && l.matches(CASE), l);
        assertTrue(r.out().contains("sparse: DeepSeek-V3.2's indexer (8 heads x 128, ue8m0 FP8 keys), top 4 of the context"), r.out());
        assertTrue(r.out().contains("24 PASS, 0 FAIL"), r.out());
    }

    @Test
    void checkRunsEachWeightDtypeAndNamesItOnItsLines() {
        CliTest.Run r = mla("check", "--backend", "java-fast", "--hidden", "64", "--prefill", "2", "--steps", "1", "--batch", "2",
                "--path", "absorbed,naive", "--cache-dtype", "f32", "--weights-dtype", "f32,bf16,fp8");
        assertEquals(0, r.code(), r.out() + r.err());
        List<String> lines = cases(r.out());
        assertEquals(12, lines.size(), r.out());                      // 3 weight dtypes × 2 paths × (contiguous, paged)
        assertEquals(4, lines.stream().filter(l -> !l.contains(" weights=")).count(), r.out());
        assertEquals(4, lines.stream().filter(l -> l.endsWith(" weights=bf16")).count(), r.out());
        assertEquals(4, lines.stream().filter(l -> l.endsWith(" weights=fp8")).count(), r.out());
        for (String l : lines) assertTrue(l.startsWith("PASS ") && l.matches(CASE), l);
        assertTrue(r.out().contains("(reference runs, bf16 weights: ") && r.out().contains("12 PASS, 0 FAIL"), r.out());
        CliTest.Run bad = mla("check", "--weights-dtype", "f16");
        assertEquals(2, bad.code(), bad.err());
        assertEquals(1, bad.err().strip().lines().count(), bad.err());
    }

    @Test
    void checkBadInputIsOneLineWithExitCode2() {
        for (String[] args : new String[][] {{"check", "--plain-kernels"}, {"check", "--batch", "0"}, {"check", "--cache-dtype", "fp4"},
                {"check", "--path", "flash"}, {"check", "--backend", "cuda"}, {"check", "--tol", "-1"}}) {
            CliTest.Run r = mla(args);
            assertEquals(2, r.code(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertTrue(r.err().startsWith("mla: error: "), r.err());
            assertTrue(cases(r.out()).isEmpty());
        }
    }

    /** An executor that never runs a kernel: the poisoned outputs must make every case fail. */
    @Test
    void anExecutorThatComputesNothingFailsEveryCase() {
        GraphExecutor idle = new GraphExecutor() {
            @Override
            public void execute(KernelGraph graph) {
            }

            @Override
            public String device() {
                return "nothing";
            }
        };
        LayerCheck check = new LayerCheck(MlaConfig.deepseekV3().withHiddenSize(32), new LayerCheck.Workload(2, 2, 1, 5), 4, 3);
        for (CacheDtype d : new CacheDtype[] {CacheDtype.F32, CacheDtype.FP8}) {
            LayerCheck.Result r = check.check(idle, "plain", AttentionPath.ABSORBED, d);
            assertFalse(r.pass(), r.line());
            assertTrue(r.line().startsWith("FAIL absorbed " + d + " plain max_abs_err=NaN"), r.line());
        }
        // and the same harness passes the reference kernels against themselves exactly
        LayerCheck.Result self = check.check(new JvmExecutor(), "plain", AttentionPath.TILED, CacheDtype.INT8);
        assertTrue(self.pass() && self.maxAbsErr() == 0, self.line());
    }

    @Test
    void gridBenchWritesTheCsvTheTransfersAndRespectsTheTimeLimit() throws IOException {
        Path csv = dir.resolve("bench.csv"), tr = dir.resolve("t.csv");
        CliTest.Run r = mla("bench", "--grid", "flashmla", "--quick", "--backend", "java-fast", "--batch", "1,2", "--context", "48,96",
                "--heads", "16", "--budget-ms", "5", "--csv", csv.toString(), "--transfers-csv", tr.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(csv);
        assertEquals(BenchCommand.CSV_HEADER, lines.get(0));
        assertEquals(1 + 2 * 2 * 2, lines.size(), String.join("\n", lines));      // 2 dtypes × 2 batches × 2 contexts
        assertTrue(lines.get(1).startsWith("java-fast,tiled,bf16,1,16,48,"), lines.get(1));   // the grid starts with bf16
        List<String> t = Files.readAllLines(tr);
        assertEquals(BenchCommand.TRANSFERS_HEADER, t.get(0));
        assertTrue(t.stream().skip(1).allMatch(l -> l.endsWith(",,0,0")), String.join("\n", t));   // the JVM copies nothing

        CliTest.Run none = mla("bench", "--grid", "flashmla", "--quick", "--backend", "java-fast", "--time-limit-s", "0", "--csv", csv.toString());
        assertEquals(0, none.code(), none.err());
        assertEquals(List.of(BenchCommand.CSV_HEADER), Files.readAllLines(csv));
        assertTrue(none.out().contains("[16/16 skipped: --time-limit-s 0 reached]"), none.out());
        assertEquals(2, mla("bench", "--grid", "vllm").code());
        assertEquals(2, mla("bench", "--layer-only").code());
    }

    @Test
    void oneCacheServesEveryContextOfAGroup() {
        DecodeBench.Shape s = new DecodeBench.Shape(AttentionPath.TILED, CacheDtype.BF16, 2, 4, 64);
        DecodeBench shared = new DecodeBench(s, 128, 9);
        JvmExecutor jvm = new JvmExecutor();
        float[] at64 = shared.runOnce(jvm);
        shared.context(128);
        float[] at128 = shared.runOnce(jvm);
        assertFalse(java.util.Arrays.equals(at64, at128), "the context changes what is attended");
        shared.context(64);
        assertArrayEquals(at64, shared.runOnce(jvm));
        assertEquals(64, shared.shape().context());
        String why = DecodeBench.unrepresentable(128, 32768, 128, AttentionPath.TILED);
        assertTrue(why != null && why.contains("more than one Java array holds"), why);
        assertEquals(null, DecodeBench.unrepresentable(128, 16384, 128, AttentionPath.TILED));
    }

    @Test
    void layerBenchTimesTheWholeLayerPerContext() throws IOException {
        Path csv = dir.resolve("layer.csv");
        CliTest.Run r = mla("bench", "--layer-only", "--backend", "java-fast", "--layer-hidden", "64", "--layer-batch", "1,3",
                "--layer-context", "8,20", "--layer-dtype", "int8", "--budget-ms", "5", "--layer-csv", csv.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(csv);
        assertEquals("backend,path,dtype,batch,hidden,heads,context,ms_per_step,bytes_to_device,bytes_to_host,kernel_ms", lines.get(0));
        assertEquals(List.of("java-fast,tiled,int8,1,64,128,8", "java-fast,tiled,int8,1,64,128,20", "java-fast,tiled,int8,3,64,128,8",
                "java-fast,tiled,int8,3,64,128,20"), lines.stream().skip(1).map(l -> String.join(",", List.of(l.split(",")).subList(0, 7))).toList());
        for (String l : lines.subList(1, lines.size())) {
            assertTrue(Double.parseDouble(l.split(",")[7]) > 0, l);
            assertTrue(l.endsWith(",0,0,"), l);
        }
    }

    @Test
    void gpuReportTabulatesWhatThereIsAndListsWhatIsMissing() throws IOException {
        Path out = dir.resolve("out");
        Files.createDirectories(out);
        Files.writeString(out.resolve("bench.csv"), BenchCommand.CSV_HEADER_SHORT + "\n"
                + "tornado:0:0,tiled,bf16,128,128,16384,2.5,1207.9,2853.2\n"
                + "tornado:0:0,tiled,f32,1,16,1024,0.125,18.87,296.7\n");
        Files.writeString(out.resolve("torch.csv"), BenchCommand.CSV_HEADER_SHORT + "\n"
                + "torch-2.11-cuda,einsum-absorb,bf16,128,128,16384,1.25,2415.9,5706.4\n");
        Files.writeString(out.resolve("bench-transfers.csv"), BenchCommand.TRANSFERS_HEADER + "\n"
                + "tornado:0:0,tiled,bf16,128,128,16384,2.125,12583040,8388624\n");
        Files.writeString(out.resolve("check.txt"), "mla check: tornado 0:0 PTX H200\nPASS tiled f32 plain max_abs_err=1e-06 max_rel_err=2.5e-06 tol=1e-04\n"
                + "FAIL tiled fp8 kernel-context max_abs_err=1e-01 max_rel_err=1e-01 tol=3e-03\n1 PASS, 1 FAIL (3.0 s)\n");
        Files.writeString(out.resolve("run-log.tsv"), "check.txt\t1\t12\tmla check --backend tornado\t\n"
                + "torch.csv+torch-peaks.csv\t-\t0\tpython3 torch_absorb.py\tskipped: python3 has no torch with CUDA\n");
        CliTest.Run r = mla("gpu-report", out.toString());
        assertEquals(0, r.code(), r.err());
        String md = Files.readString(out.resolve("summary.md"));
        assertTrue(md.contains("| tornado:0:0 | tiled | bf16 | 128 | 128 | 16384 | 2.50 | 1208 | 2853 | 2.13 | 12583040 | 8388624 | 1.25 | 2416 | 0.500 |"), md);
        assertTrue(md.contains("1 PASS, 1 FAIL") && md.contains("FAIL tiled fp8 kernel-context"), md);
        assertTrue(md.contains("- `torch-peaks.csv`: skipped: python3 has no torch with CUDA"), md);
        assertTrue(md.contains("- `devices.txt`") && md.contains("- `layer.csv`"), md);
        assertTrue(md.contains("(check.txt, `mla check --backend tornado`)"), md);
        assertTrue(Files.size(out.resolve("bench-chart.png")) > 1000);

        Files.writeString(out.resolve("bench.csv"), BenchCommand.CSV_HEADER_SHORT + "\ntornado,tiled,bf16,x,1,1,1,1,1\n");
        CliTest.Run bad = mla("gpu-report", out.toString());
        assertEquals(2, bad.code());
        assertTrue(bad.err().contains("bench.csv line 2: expected 9 fields"), bad.err());
        assertEquals(1, bad.err().strip().lines().count());
        // bench's CSV of today: three more columns after the nine (ms_median, device, date), read as the nine are
        Files.writeString(out.resolve("bench.csv"), BenchCommand.CSV_HEADER + "\n"
                + "tornado:0:0,tiled,bf16,128,128,16384,2.5,1207.9,2853.2,2.4,NVIDIA H200 (CUDA; sm_90),2026-12-07,yes\n");
        assertEquals(0, mla("gpu-report", out.toString()).code());
        assertTrue(Files.readString(out.resolve("summary.md")).contains("| tornado:0:0 | tiled | bf16 | 128 | 128 | 16384 | 2.50 | 1208 | 2853 |"));
        Files.writeString(out.resolve("bench.csv"), BenchCommand.CSV_HEADER + "\ntornado:0:0,tiled,bf16,128,128,16384,2.5,1207.9,2853.2\n");
        CliTest.Run shortRow = mla("gpu-report", out.toString());
        assertEquals(2, shortRow.code());
        assertTrue(shortRow.err().contains("bench.csv line 2: expected 13 fields"), shortRow.err());
        assertEquals(2, mla("gpu-report", dir.resolve("nope").toString()).code());
    }

    @Test
    void gpuReportSetsTheTensorCoresBesideTheKernelContextKernels() throws IOException {
        Path out = dir.resolve("tc");
        Files.createDirectories(out);
        // B128: 2.0 ms with tensor cores, 6.0 without (speed-up 3); B1 only without (its tensor-core run hit the time limit)
        Files.writeString(out.resolve("bench-tc.csv"), BenchCommand.CSV_HEADER_SHORT + "\ntornado:0:0,absorbed,bf16,128,128,4096,2.0,302.0,73000\n");
        Files.writeString(out.resolve("bench-notc.csv"), BenchCommand.CSV_HEADER_SHORT + "\ntornado:0:0,absorbed,bf16,128,128,4096,6.0,100.7,24333\n"
                + "tornado:0:0,absorbed,bf16,1,128,4096,0.25,18.9,4562\n");
        Files.writeString(out.resolve("run-log.tsv"), "bench-tc.csv\t0\t30\tmla bench --backend tornado --path absorbed --dtype bf16\t\n");
        CliTest.Run r = mla("gpu-report", out.toString());
        assertEquals(0, r.code(), r.err());
        String md = Files.readString(out.resolve("summary.md"));
        assertTrue(md.contains("## Tensor cores (bench-tc.csv, `mla bench --backend tornado --path absorbed --dtype bf16`"), md);
        assertTrue(md.contains("| bf16 | 128 | 128 | 4096 | 2.00 | 73.0 | 6.00 | 24.3 | 3.00 |"), md);
        assertTrue(md.contains("| bf16 | 128 | 1 | 4096 | - | - | 0.250 | 4.56 | - |"), md);

        // without the pair (any route but CUDA) there is no such section and nothing is missing for it
        Files.delete(out.resolve("bench-tc.csv"));
        Files.delete(out.resolve("bench-notc.csv"));
        Files.writeString(out.resolve("run-log.tsv"), "check.txt\t0\t12\tmla check --backend tornado\t\n");
        assertEquals(0, mla("gpu-report", out.toString()).code());
        String none = Files.readString(out.resolve("summary.md"));
        assertFalse(none.contains("Tensor cores") || none.contains("bench-tc.csv") || none.contains("bench-notc.csv"), none);
    }

    @Test
    void gpuReportHasTheCublasCheckWhereTheCudaRouteWroteIt() throws IOException {
        Path out = dir.resolve("cublas");
        Files.createDirectories(out);
        Files.writeString(out.resolve("check-cublas.txt"), "mla check: tornado 0:0 CUDA H200\n"
                + "PASS absorbed bf16 kernel-context weights=fp8 max_abs_err=1e-06 max_rel_err=3.5e-06 tol=1e-02\n"
                + "FAIL naive bf16 kernel-context weights=f32 max_abs_err=1e+00 max_rel_err=1e+00 tol=1e-04\n1 PASS, 1 FAIL (9.0 s)\n");
        Files.writeString(out.resolve("run-log.tsv"), "check-cublas.txt\t1\t20\tmla check --backend tornado --quick --prefill 70\t\n");
        assertEquals(0, mla("gpu-report", out.toString()).code());
        String md = Files.readString(out.resolve("summary.md"));
        assertTrue(md.contains("## Correctness (check-cublas.txt, `mla check --backend tornado --quick --prefill 70`)"), md);
        assertTrue(md.contains("1 PASS, 1 FAIL: a prefill past 128 token rows") && md.contains("3.5e-06"), md);
        assertTrue(md.contains("FAIL naive bf16 kernel-context weights=f32"), md);
        assertFalse(md.contains("- `check-cublas.txt`"), md);

        // any other route: no such file, no section, nothing listed as missing for it
        Files.delete(out.resolve("check-cublas.txt"));
        Files.writeString(out.resolve("run-log.tsv"), "check.txt\t0\t12\tmla check --backend tornado\t\n");
        assertEquals(0, mla("gpu-report", out.toString()).code());
        String none = Files.readString(out.resolve("summary.md"));
        assertFalse(none.contains("check-cublas.txt"), none);
    }

    @Test
    void gpuReportOfTwoRoutesSetsThemAndPyTorchSideBySide() throws IOException {
        Path out = dir.resolve("routes");
        for (String r : new String[] {"cuda", "ptx"}) {
            Files.createDirectories(out.resolve(r));
            Files.writeString(out.resolve(r).resolve("devices.txt"), "0:0  " + r.toUpperCase(java.util.Locale.ROOT) + "  NVIDIA H200  150.0 GB  (default)\n");
            Files.writeString(out.resolve(r).resolve("check.txt"), "PASS tiled f32 plain max_abs_err=1e-06 max_rel_err=2.5e-06 tol=1e-04\n1 PASS, 0 FAIL (1.0 s)\n");
        }
        // cuda 2.0 ms, ptx 3.0 ms, torch 2.5 ms at one shape; a shape only PTX reached
        Files.writeString(out.resolve("cuda").resolve("bench.csv"), BenchCommand.CSV_HEADER_SHORT + "\ntornado:0:0,tiled,bf16,8,128,8192,2.0,1,1\n");
        Files.writeString(out.resolve("ptx").resolve("bench.csv"), BenchCommand.CSV_HEADER_SHORT + "\ntornado:0:0,tiled,bf16,8,128,8192,3.0,1,1\n"
                + "tornado:0:0,tiled,f32,1,16,1024,0.5,1,1\n");
        Files.writeString(out.resolve("torch.csv"), BenchCommand.CSV_HEADER_SHORT + "\ntorch-2.11-cuda,einsum-absorb,bf16,8,128,8192,2.5,1,1\n");
        Files.writeString(out.resolve("run-log.tsv"), "unpack-sdk\t0\t3\ttar -xJf kit.txz\t\n");
        CliTest.Run r = mla("gpu-report", out.toString());
        assertEquals(0, r.code(), r.err());
        String md = Files.readString(out.resolve("summary.md"));
        // ptx/cuda = 3.0 / 2.0, torch/cuda = 2.5 / 2.0
        assertTrue(md.contains("| tiled | bf16 | 128 | 8 | 8192 | 2.00 | 3.00 | 1.50 | 2.50 | 1.25 |"), md);
        assertTrue(md.contains("| tiled | f32 | 16 | 1 | 1024 | - | 0.500 | - | - | - |"), md);
        assertTrue(md.contains("| cuda | 0:0  CUDA  NVIDIA H200") && md.contains("| 1 PASS, 0 FAIL | missing | 1 | [cuda/summary.md]"), md);
        assertTrue(Files.readString(out.resolve("ptx").resolve("summary.md")).contains("## Correctness"));
    }
}
