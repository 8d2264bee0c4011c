package org.tornadomla.attention;

import org.tornadomla.MlaException;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.config.RopeFrequencies;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.CacheOps;
import org.tornadomla.kernels.LatentAttention;
import org.tornadomla.kernels.Norms;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.Projections;
import org.tornadomla.kernels.Rope;
import org.tornadomla.weights.MlaWeights;

/**
 * One DeepSeek-V3 MLA layer on the JVM: every step is a kernel of {@code org.tornadomla.kernels} run
 * sequentially, which makes this class the CPU reference of the library.
 *
 * <pre>
 *  x [B,T,D] ─ q_a_proj ─ q_a_layernorm ─ q_b_proj ─ q [B,T,H,d_n+d_r] ─ rope(q_pe)  (or q_proj when r_q = 0)
 *            └ kv_a_proj_with_mqa ─ [c | k_pe] ─ kv_a_layernorm(c) = c_kv, rope(k_pe) ─ append to cache
 *  attention over the cache (path NAIVE | ABSORBED | TILED) ─ o [B,T,H,d_v] ─ o_proj ─ y [B,T,D]
 * </pre>
 *
 * A forward call takes T new tokens of each of the B sequences of a {@link LatentCache}; sequence b's
 * tokens sit at positions cache.length(b) … +T−1 and attend causally to everything cached before them.
 * A prefill is a forward call on an empty cache, a decode step one with T = 1, a chunked prefill one on a
 * non-empty cache. Not thread-safe: one layer, one caller at a time (it reuses its scratch buffers).
 */
public final class MlaLayer {
    private final MlaConfig c;
    private final MlaWeights w;
    private final float[] invFreq;
    private final float cosSinScale;
    private final float scale;
    private Workspace ws;

    public MlaLayer(MlaWeights weights) {
        this.w = weights;
        this.c = weights.config;
        this.invFreq = RopeFrequencies.inverseFrequencies(c);
        this.cosSinScale = RopeFrequencies.cosSinScale(c);
        this.scale = (float) c.softmaxScale();
    }

    public MlaConfig config() {
        return c;
    }

    public MlaWeights weights() {
        return w;
    }

    /** A cache for {@code batch} sequences of up to {@code capacity} tokens each. */
    public LatentCache newCache(int batch, int capacity, CacheDtype dtype) {
        return new LatentCache(c, batch, capacity, dtype);
    }

    /** Prefill (or a prefill chunk) of {@code tokens} tokens per sequence; returns y [B, tokens, D]. */
    public float[] prefill(LatentCache cache, float[] x, int tokens, AttentionPath path) {
        return forward(cache, x, tokens, AttentionOptions.of(path));
    }

    /** One decode step: one token per sequence, x [B, D]; returns y [B, D]. */
    public float[] decode(LatentCache cache, float[] x, AttentionPath path) {
        return forward(cache, x, 1, AttentionOptions.of(path));
    }

    public float[] forward(LatentCache cache, float[] x, int tokens, AttentionOptions opt) {
        float[] y = new float[cache.batch() * tokens * c.hiddenSize()];
        forward(cache, x, tokens, opt, y);
        return y;
    }

    /** As {@link #forward(LatentCache, float[], int, AttentionOptions)}, writing into {@code y}. */
    public void forward(LatentCache cache, float[] x, int tokens, AttentionOptions opt, float[] y) {
        validate(cache, x, tokens, y);
        final int batch = cache.batch(), rows = batch * tokens, cap = cache.capacity();
        final int d = c.hiddenSize(), h = c.numHeads(), rq = c.qLoraRank(), dc = c.kvLoraRank();
        final int dn = c.qkNopeHeadDim(), dr = c.qkRopeHeadDim(), dv = c.vHeadDim(), qk = dn + dr;
        Workspace s = workspace(rows, batch, cap, opt);
        cache.lengthsInto(s.seqStart);
        int dt = cache.dtype().code;
        float[] pow2 = Bf16.POW2;

        // 1. query: q = q_b_proj(q_a_layernorm(q_a_proj(x))), or q_proj(x); q_pe roped in place
        if (c.hasQLora()) {
            project(x, w.wqA, s.cqRaw, rows, d, rq);
            Norms.rmsNorm(s.cqRaw, rq, w.qANorm, s.cq, rows, rq, (float) c.rmsNormEps());
            project(s.cq, w.wqB, s.q, rows, rq, h * qk);
        } else {
            project(x, w.wq, s.q, rows, d, h * qk);
        }
        Rope.rotatePairs(s.q, h * qk, h, qk, dn, dr, s.seqStart, tokens, rows, invFreq, cosSinScale);

        // 2. joint KV down-projection: [c | k_pe]; c_kv = kv_a_layernorm(c); k_pe roped, shared by all heads
        project(x, w.wkvA, s.kvA, rows, d, dc + dr);
        Norms.rmsNorm(s.kvA, dc + dr, w.kvANorm, s.ckv, rows, dc, (float) c.rmsNormEps());
        Rope.rotatePairs(s.kvA, dc + dr, 1, 0, dc, dr, s.seqStart, tokens, rows, invFreq, cosSinScale);

        // 3. cache: c_kv and k_pe only
        float[] kv32 = cache.f32();
        short[] kv16 = cache.bf16();
        CacheOps.append(s.ckv, s.kvA, kv32, kv16, dt, pow2, s.seqStart, batch, tokens, cap, dc, dr);

        // 4. attention over the cache → o [rows, H, d_v]
        switch (opt.path()) {
            case NAIVE -> {
                LatentAttention.decompress(kv32, kv16, dt, pow2, w.wkvB, s.kvFull, s.seqStart,
                        batch, tokens, cap, h, dn, dv, dc, dr);
                LatentAttention.naiveScores(s.q, s.kvFull, kv32, kv16, dt, pow2, s.scores,
                        s.seqStart, batch, tokens, cap, h, dn, dr, dv, dc, scale);
                LatentAttention.softmax(s.scores, s.seqStart, batch, tokens, cap, h);
                LatentAttention.naiveValues(s.scores, s.kvFull, s.o, s.seqStart, batch, tokens, cap, h, dn, dv);
            }
            case ABSORBED -> {
                Absorb.absorbQuery(s.q, w.wkvB, s.qLat, rows, h, dn, dr, dv, dc);
                LatentAttention.absorbedScores(s.qLat, s.q, kv32, kv16, dt, pow2, s.scores, s.seqStart,
                        batch, tokens, cap, h, dn, dr, dc, scale);
                LatentAttention.softmax(s.scores, s.seqStart, batch, tokens, cap, h);
                LatentAttention.absorbedValues(s.scores, kv32, kv16, dt, pow2, s.oLat,
                        s.seqStart, batch, tokens, cap, h, dc, dr);
                Absorb.unabsorbValue(s.oLat, w.wkvB, s.o, rows, h, dn, dv, dc);
            }
            case TILED -> {
                Absorb.absorbQuery(s.q, w.wkvB, s.qLat, rows, h, dn, dr, dv, dc);
                OnlineSoftmax.splitTiles(s.qLat, s.q, kv32, kv16, dt, pow2, s.sTile, s.oPart, s.lsePart, s.seqStart, batch, tokens, cap, h, dn, dr, dc, scale,
                        opt.tileSize(), opt.numSplits());
                OnlineSoftmax.combine(s.oPart, s.lsePart, s.oLat, rows, h, opt.numSplits(), dc);
                Absorb.unabsorbValue(s.oLat, w.wkvB, s.o, rows, h, dn, dv, dc);
            }
        }

        // 5. output projection
        project(s.o, w.wo, y, rows, h * dv, d);
        cache.advance(tokens);
    }

    private static void project(float[] x, float[] weight, float[] y, int rows, int in, int out) {
        if (rows == 1) {
            Projections.matVec(x, weight, y, in, out);
        } else {
            Projections.matMul(x, weight, y, rows, in, out);
        }
    }

    private void validate(LatentCache cache, float[] x, int tokens, float[] y) {
        if (cache == null) throw new MlaException("cache must not be null");
        if (cache.kvLoraRank() != c.kvLoraRank() || cache.ropeDim() != c.qkRopeHeadDim()) {
            throw new MlaException("cache was made for kv_lora_rank " + cache.kvLoraRank() + ", qk_rope_head_dim "
                    + cache.ropeDim() + "; this layer has " + c.kvLoraRank() + ", " + c.qkRopeHeadDim());
        }
        if (tokens <= 0) throw new MlaException("tokens per sequence must be > 0, found " + tokens);
        long expected = (long) cache.batch() * tokens * c.hiddenSize();
        if (x == null || x.length != expected) {
            throw new MlaException("input x: expected shape " + MlaException.shape(cache.batch(), tokens, c.hiddenSize())
                    + " (" + expected + " floats), found " + (x == null ? "null" : x.length + " floats"));
        }
        if (y.length != expected) {
            throw new MlaException("output y: expected " + expected + " floats, found " + y.length);
        }
        for (int i = 0; i < x.length; i++) {
            if (!Float.isFinite(x[i])) {
                int row = i / c.hiddenSize();
                throw new MlaException("input x holds " + x[i] + " at [" + row / tokens + ", " + row % tokens + ", "
                        + i % c.hiddenSize() + "]; expected finite numbers");
            }
        }
        cache.checkRoom(tokens);
        int maxPos = 0;
        for (int b = 0; b < cache.batch(); b++) maxPos = Math.max(maxPos, cache.length(b) + tokens);
        if (maxPos > c.maxPositionEmbeddings()) {
            throw new MlaException("position " + (maxPos - 1) + " is past max_position_embeddings " + c.maxPositionEmbeddings());
        }
    }

    private Workspace workspace(int rows, int batch, int capacity, AttentionOptions opt) {
        if (ws == null || !ws.fits(rows, batch, capacity, opt)) ws = new Workspace(c, rows, batch, capacity, opt);
        return ws;
    }

    /** Scratch buffers of one forward shape, reused across calls of the same shape (e.g. decode steps). */
    private static final class Workspace {
        final int rows, batch, capacity;
        final AttentionOptions opt;
        final int[] seqStart;
        final float[] cqRaw, cq, q, kvA, ckv, o;
        final float[] kvFull, scores;            // NAIVE / ABSORBED
        final float[] qLat, oLat;                // ABSORBED / TILED
        final float[] sTile, oPart, lsePart;     // TILED

        Workspace(MlaConfig c, int rows, int batch, int capacity, AttentionOptions opt) {
            this.rows = rows;
            this.batch = batch;
            this.capacity = capacity;
            this.opt = opt;
            int h = c.numHeads(), dc = c.kvLoraRank();
            seqStart = new int[batch];
            cqRaw = new float[rows * Math.max(1, c.qLoraRank())];
            cq = new float[cqRaw.length];
            q = new float[rows * h * c.qkHeadDim()];
            kvA = new float[rows * c.cacheWidth()];
            ckv = new float[rows * dc];
            o = new float[rows * h * c.vHeadDim()];
            AttentionPath p = opt.path();
            kvFull = p == AttentionPath.NAIVE
                    ? new float[checkedSize("decompressed K/V", (long) batch * capacity * h * (c.qkNopeHeadDim() + c.vHeadDim()))]
                    : new float[1];
            scores = p != AttentionPath.TILED ? new float[checkedSize("scores", (long) rows * h * capacity)] : new float[1];
            qLat = p != AttentionPath.NAIVE ? new float[rows * h * dc] : new float[1];
            oLat = qLat.length > 1 ? new float[rows * h * dc] : new float[1];
            int parts = p == AttentionPath.TILED ? rows * h * opt.numSplits() : 1;
            sTile = new float[p == AttentionPath.TILED ? checkedSize("tile scores", (long) parts * opt.tileSize()) : 1];
            oPart = new float[p == AttentionPath.TILED ? checkedSize("split outputs", (long) parts * dc) : 1];
            lsePart = new float[parts];
        }

        boolean fits(int rows, int batch, int capacity, AttentionOptions opt) {
            return this.rows == rows && this.batch == batch && this.capacity == capacity && this.opt.equals(opt);
        }

        private static int checkedSize(String what, long n) {
            if (n > Integer.MAX_VALUE - 8) {
                throw new MlaException(what + " need " + n + " floats, more than one Java array holds; use the TILED path, "
                        + "fewer tokens per call or a smaller cache capacity");
            }
            return (int) n;
        }
    }
}
