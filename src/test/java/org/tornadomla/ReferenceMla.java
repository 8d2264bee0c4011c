package org.tornadomla;

import org.tornadomla.weights.Bf16Bits;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.weights.MlaWeights;

/**
 * An independent double-precision MLA layer written straight from docs/design.md §1 and DeepSeek's
 * {@code attn_impl = "naive"}: one sequence, a prefill of T tokens at positions 0 … T−1, K and V
 * decompressed for every token, RoPE on complex pairs with its own YaRN frequencies. Shares no code with
 * the library except the weight arrays.
 */
public final class ReferenceMla {
    public record Result(double[] y, double[] ckv, double[] kpe) {
    }

    private ReferenceMla() {
    }

    /** @param bf16Cache round c_kv and k_pe to bf16 before attention, as a bf16 cache does */
    public static Result prefill(MlaWeights w, float[] x, int T, boolean bf16Cache) {
        return prefill(w, x, T, bf16Cache, null);
    }

    /**
     * As {@link #prefill(MlaWeights, float[], int, boolean)}, token t attending only to the positions
     * {@code attend[t]} (all of 0 … t when null): DeepSeek Sparse Attention's index mask, −∞ for the others.
     */
    public static Result prefill(MlaWeights w, float[] x, int T, boolean bf16Cache, int[][] attend) {
        MlaConfig c = w.config();
        // the weights as f32, whatever their form (bf16 and fp8 dequantise exactly)
        float[] wqA = c.hasQLora() ? w.qA().toFloats() : null, qANorm = c.hasQLora() ? w.qANorm().toFloats() : null;
        float[] wqB = c.hasQLora() ? w.qB().toFloats() : null, wq = c.hasQLora() ? null : w.q().toFloats();
        float[] wkvA = w.kvA().toFloats(), kvANorm = w.kvANorm().toFloats(), wkvB = w.kvB().toFloats(), wo = w.o().toFloats();
        int D = c.hiddenSize(), H = c.numHeads(), dc = c.kvLoraRank(), dn = c.qkNopeHeadDim(), dr = c.qkRopeHeadDim(), dv = c.vHeadDim();
        int qk = dn + dr;
        double[] freq = frequencies(c);
        double mscaleCs = 1, scale = 1 / Math.sqrt(qk);
        if (c.ropeScaling() != null) {
            double f = c.ropeScaling().factor();
            double ms = c.ropeScaling().mscale(), msAll = c.ropeScaling().mscaleAllDim();
            mscaleCs = ym(f, ms) / ym(f, msAll);
            if (msAll != 0) scale *= ym(f, msAll) * ym(f, msAll);
        }
        double[] q = new double[T * H * qk];
        double[] ckv = new double[T * dc];
        double[] kpe = new double[T * dr];
        for (int t = 0; t < T; t++) {
            double[] xt = new double[D];
            for (int i = 0; i < D; i++) xt[i] = x[t * D + i];
            double[] qt;
            if (c.hasQLora()) {
                double[] cq = rmsNorm(mv(wqA, xt, c.qLoraRank()), qANorm, c.rmsNormEps());
                qt = mv(wqB, cq, H * qk);
            } else {
                qt = mv(wq, xt, H * qk);
            }
            for (int h = 0; h < H; h++) rope(qt, h * qk + dn, dr, t, freq, mscaleCs);
            double[] a = mv(wkvA, xt, dc + dr);
            double[] lat = rmsNorm(java.util.Arrays.copyOf(a, dc), kvANorm, c.rmsNormEps());
            rope(a, dc, dr, t, freq, mscaleCs);
            System.arraycopy(qt, 0, q, t * H * qk, H * qk);
            System.arraycopy(lat, 0, ckv, t * dc, dc);
            System.arraycopy(a, dc, kpe, t * dr, dr);
        }
        if (bf16Cache) {
            for (int i = 0; i < ckv.length; i++) ckv[i] = Bf16Bits.decode(Bf16Bits.encode((float) ckv[i]));
            for (int i = 0; i < kpe.length; i++) kpe[i] = Bf16Bits.decode(Bf16Bits.encode((float) kpe[i]));
        }
        // decompress: k_nope and v of every head for every token
        double[] kv = new double[T * H * (dn + dv)];
        for (int t = 0; t < T; t++) {
            for (int o = 0; o < H * (dn + dv); o++) {
                double s = 0;
                for (int i = 0; i < dc; i++) s += wkvB[o * dc + i] * ckv[t * dc + i];
                kv[t * H * (dn + dv) + o] = s;
            }
        }
        double[] y = new double[T * D];
        for (int t = 0; t < T; t++) {
            double[] o = new double[H * dv];
            for (int h = 0; h < H; h++) {
                double[] sc = new double[t + 1];
                double max = Double.NEGATIVE_INFINITY;
                boolean[] kept = new boolean[t + 1];
                if (attend == null) java.util.Arrays.fill(kept, true);
                else for (int j : attend[t]) kept[j] = true;
                for (int j = 0; j <= t; j++) {
                    if (!kept[j]) {
                        sc[j] = Double.NEGATIVE_INFINITY;
                        continue;
                    }
                    double s = 0;
                    for (int d = 0; d < dn; d++) s += q[(t * H + h) * qk + d] * kv[(j * H + h) * (dn + dv) + d];
                    for (int d = 0; d < dr; d++) s += q[(t * H + h) * qk + dn + d] * kpe[j * dr + d];
                    sc[j] = s * scale;
                    max = Math.max(max, sc[j]);
                }
                double sum = 0;
                for (int j = 0; j <= t; j++) sum += (sc[j] = kept[j] ? Math.exp(sc[j] - max) : 0);
                for (int v = 0; v < dv; v++) {
                    double s = 0;
                    for (int j = 0; j <= t; j++) s += sc[j] / sum * kv[(j * H + h) * (dn + dv) + dn + v];
                    o[h * dv + v] = s;
                }
            }
            double[] yt = mv(wo, o, D);
            System.arraycopy(yt, 0, y, t * D, D);
        }
        return new Result(y, ckv, kpe);
    }

    private static double ym(double f, double m) {
        return f <= 1 ? 1 : 0.1 * m * Math.log(f) + 1;
    }

    /** θ^(−2i/d_r), YaRN-blended: ramp between floor(corr(βf)) and ceil(corr(βs)). */
    static double[] frequencies(MlaConfig c) {
        int dr = c.qkRopeHeadDim();
        double[] f = new double[dr / 2];
        for (int i = 0; i < f.length; i++) f[i] = Math.pow(c.ropeTheta(), -2.0 * i / dr);
        if (c.ropeScaling() != null) {
            var y = c.ropeScaling();
            double lnTheta = Math.log(c.ropeTheta());
            double low = Math.max(0, Math.floor(dr * Math.log(y.originalMaxPositionEmbeddings() / (2 * Math.PI * y.betaFast())) / (2 * lnTheta)));
            double high = Math.min(dr - 1, Math.ceil(dr * Math.log(y.originalMaxPositionEmbeddings() / (2 * Math.PI * y.betaSlow())) / (2 * lnTheta)));
            if (low == high) high += 0.001;
            for (int i = 0; i < f.length; i++) {
                double ramp = Math.max(0, Math.min(1, (i - low) / (high - low)));
                f[i] = (1 - ramp) * f[i] + ramp * f[i] / y.factor();
            }
        }
        return f;
    }

    /** (x[2i] + i·x[2i+1])·e^{i·p·f_i}, scaled by HF's cos/sin multiplier. */
    private static void rope(double[] x, int off, int dr, int pos, double[] f, double m) {
        for (int i = 0; i < dr / 2; i++) {
            double re = x[off + 2 * i], im = x[off + 2 * i + 1];
            double cs = Math.cos(pos * f[i]) * m, sn = Math.sin(pos * f[i]) * m;
            x[off + 2 * i] = re * cs - im * sn;
            x[off + 2 * i + 1] = re * sn + im * cs;
        }
    }

    private static double[] mv(float[] w, double[] x, int out) {
        double[] y = new double[out];
        for (int o = 0; o < out; o++) {
            double s = 0;
            for (int i = 0; i < x.length; i++) s += w[o * x.length + i] * x[i];
            y[o] = s;
        }
        return y;
    }

    private static double[] rmsNorm(double[] x, float[] g, double eps) {
        double ss = 0;
        for (double v : x) ss += v * v;
        double inv = 1 / Math.sqrt(ss / x.length + eps);
        double[] y = new double[x.length];
        for (int i = 0; i < x.length; i++) y[i] = g[i] * x[i] * inv;
        return y;
    }
}
