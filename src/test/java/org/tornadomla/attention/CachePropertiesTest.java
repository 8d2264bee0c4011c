package org.tornadomla.attention;

import org.tornadomla.cache.internal.CacheStorage;
import org.tornadomla.cache.PagedCacheSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.tornadomla.MlaException;
import org.tornadomla.TestData;
import org.tornadomla.cache.CacheDtype;
import org.tornadomla.cache.CacheFiles;
import org.tornadomla.cache.LatentCache;
import org.tornadomla.config.MlaConfig;
import org.tornadomla.graph.JvmExecutor;
import org.tornadomla.weights.MlaWeights;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A property-based test of the cache API (issue 26, item 6): seeded random sequences of joins, steps (variable
 * length, mixing prefill chunks and decode tokens, and uniform steps over every slot), forks, truncations, frees,
 * exports and imports, and operations the API must refuse, run against a simple model of what the cache should
 * hold, on every cache dtype and attention path, contiguous and paged, with shrinking of failures.
 *
 * <p><b>The model</b> ({@link Model}): per sequence slot, nothing (no sequence) or the list of input tokens the
 * sequence has consumed, positions 0 … len − 1 (each token a seed of its input vector). It says what each operation
 * does to the lists, which id a join or a fork gets, and which operations the API must refuse, with a fragment of
 * the refusal's message.
 *
 * <p><b>The property</b>: after every operation the cache holds exactly the model's sequences, with the model's
 * lengths; each sequence's stored latents and roped keys are those of its history replayed alone (below), bit for
 * bit; every block's reference count is the number of block tables naming it. Every step's output for its new tokens
 * equals the replay's output for those positions. A refused operation throws {@link MlaException} with the
 * expected message and leaves the cache as it was (block tables, lengths, contents, pool). At the end every live
 * sequence decodes one more token on each attention path, checked the same way.
 *
 * <p>The paged cache has blocks of {@value #BLOCK} tokens (a sequence spans up to 4), scattered over a pool with a
 * block for every slot at full length, so a step never runs out of blocks (PagedLayerTest covers that refusal); the
 * contiguous cache has its one block per slot and no more, so a fork into a freed slot followed by a step of every
 * sequence uses the pool to its last block (this found prepare counting a copy for every writer of a shared block).
 *
 * <p><b>The reference</b> is an independent path: the sequence's whole token history as one prefill into a fresh
 * contiguous batch-1 cache of the same dtype, on a fresh layer of the same weights on the {@link JvmExecutor} (the
 * uniform forward, which never sees a block table, another sequence, a fork, a chunk or a file). For bf16, int8 and
 * fp8 caches the replay runs on the same dtype: rounding and quantisation are per token, so the replay stores the
 * same codes and the outputs agree as closely as f32 ones. The outputs are compared with |y − ref| ≤ {@value #TOL} ·
 * max(1, |ref|): both do the same arithmetic per token row, so on the JVM the outputs come out bit-identical (the
 * largest error seen is 0; {@link PagedLayerTest} holds the same comparison to 1e-6); the margin is for a change of
 * summation order within a tile, which is not a bug, while any wrong token, position or block gives errors of order
 * 1e-1 here. The cache contents are compared exactly (the same codes).
 *
 * <p><b>Shrinking</b>: a failing case is run again with operations removed one at a time, then with token counts
 * and truncation lengths halved, as long as it still fails; the assertion names the seed, the setup and the
 * minimal list. {@link #theCheckerCatchesAWrongModel()} shows the property is not vacuous: models that forget a
 * truncation, or keep the wrong end of one, fail and shrink to two or three operations.
 *
 * <p>By default {@value #DEFAULT_SEEDS} seeds × {@value #DEFAULT_OPS} operations per setup (4 dtypes × contiguous
 * and paged); {@code -Dmla.props.seeds=N} and {@code -Dmla.props.ops=N} run more, {@code -Dmla.props.seed=S} only
 * seed S (to replay a failure).
 */
class CachePropertiesTest {
    static final MlaConfig C = TestData.small();
    static final MlaWeights W = MlaWeights.random(C, 3);
    static final int D = C.hiddenSize();
    /** Sequence slots, tokens per sequence, tokens per block of the paged cache (sequences span up to 4 blocks). */
    static final int SLOTS = 4, CAPACITY = 16, BLOCK = 4;
    static final double TOL = 1e-5;
    static final int DEFAULT_SEEDS = 20, DEFAULT_OPS = 30;
    static final AttentionOptions[] OPTS = {AttentionOptions.of(AttentionPath.NAIVE), AttentionOptions.of(AttentionPath.ABSORBED),
            AttentionOptions.of(AttentionPath.TILED), new AttentionOptions(AttentionPath.TILED, 3, 2)};
    static final String[] OPT_NAMES = {"naive", "absorbed", "tiled", "tiled(tile 3, 2 splits)"};
    /** Layers whose caches and files this layer must refuse: another layer index, other weights, another config. */
    static final MlaWeights[] FOREIGN = {MlaWeights.random(C, 3, 1), MlaWeights.random(C, 4),
            MlaWeights.random(new MlaConfig(48, 2, 32, C.kvLoraRank(), 16, C.qkRopeHeadDim(), 12, 10000, 1e-6, 4096, 2, null), 3)};
    static final String[] FOREIGN_NAMES = {"layer 1", "other weights", "other config"};

    @TempDir
    static Path dir;

    enum Kind { CONTIGUOUS, PAGED }

    /** Model errors the checker must catch ({@link #theCheckerCatchesAWrongModel}); NONE is the model of the API. */
    enum Mutant { NONE, FORGETS_TRUNCATE, TRUNCATE_KEEPS_SUFFIX }

    record Setup(CacheDtype dtype, Kind kind) {
        @Override
        public String toString() {
            return dtype + " " + kind.name().toLowerCase();
        }
    }

    static Stream<Setup> setups() {
        return Arrays.stream(CacheDtype.values()).flatMap(dt -> Arrays.stream(Kind.values()).map(k -> new Setup(dt, k)));
    }

    // ---------------------------------------------------------------- operations

    /** One operation, with concrete arguments: it means the same in any state (where it may be one the API refuses). */
    sealed interface Op permits Add, Step, Uniform, Fork, Truncate, Free, Transfer, ForeignImport, ForeignStep {
        /** Smaller versions of this operation, for shrinking. */
        default List<Op> smaller() {
            return List.of();
        }
    }

    record Add() implements Op {
        @Override
        public String toString() {
            return "add";
        }
    }

    /** A variable-length step: sequence ids[i] brings lens[i] tokens (seeds x + 100·i + k), on OPTS[opt]. */
    record Step(int[] ids, int[] lens, int opt, long x) implements Op {
        long token(int i, int k) {
            return x + 100L * i + k;
        }

        @Override
        public List<Op> smaller() {
            List<Op> s = new ArrayList<>();
            for (int i = 0; i < ids.length && ids.length > 1; i++) {
                int drop = i;
                s.add(new Step(IntStream.range(0, ids.length).filter(j -> j != drop).map(j -> ids[j]).toArray(),
                        IntStream.range(0, ids.length).filter(j -> j != drop).map(j -> lens[j]).toArray(), opt, x));
            }
            for (int i = 0; i < ids.length; i++) {
                if (lens[i] > 1) {
                    int[] l = lens.clone();
                    l[i] /= 2;
                    s.add(new Step(ids, l, opt, x));
                }
            }
            if (opt != 0) s.add(new Step(ids, lens, 0, x));
            return s;
        }

        @Override
        public String toString() {
            StringBuilder s = new StringBuilder("step{");
            for (int i = 0; i < ids.length; i++) s.append(i > 0 ? ", " : "").append(ids[i]).append(':').append(lens[i]);
            return s.append("} ").append(OPT_NAMES[opt]).append(" x").append(x).toString();
        }
    }

    /** A uniform step: every slot brings len tokens (slot b's k-th: seed x + 100·b + k). */
    record Uniform(int len, int opt, long x) implements Op {
        @Override
        public List<Op> smaller() {
            return len > 1 ? List.of(new Uniform(len / 2, opt, x)) : List.of();
        }

        @Override
        public String toString() {
            return "uniform(" + len + ") " + OPT_NAMES[opt] + " x" + x;
        }
    }

    record Fork(int id) implements Op {
        @Override
        public String toString() {
            return "fork(" + id + ")";
        }
    }

    record Truncate(int id, int length) implements Op {
        @Override
        public List<Op> smaller() {
            return length > 0 ? List.of(new Truncate(id, length / 2)) : List.of();
        }

        @Override
        public String toString() {
            return "truncate(" + id + ", " + length + ")";
        }
    }

    record Free(int id) implements Op {
        @Override
        public String toString() {
            return "free(" + id + ")";
        }
    }

    /** Export sequence {@code from} to a file and import it into slot {@code to}, or (to &lt; 0) into a new sequence. */
    record Transfer(int from, int to) implements Op {
        @Override
        public String toString() {
            return "transfer(" + from + " -> " + (to < 0 ? "new" : Integer.toString(to)) + ")";
        }
    }

    /** Import a file exported by FOREIGN[layer] (always refused). */
    record ForeignImport(int layer, int to) implements Op {
        @Override
        public String toString() {
            return "import(file of " + FOREIGN_NAMES[layer] + " -> " + to + ")";
        }
    }

    /** A decode step of sequence id by FOREIGN[layer] (always refused). */
    record ForeignStep(int layer, int id) implements Op {
        @Override
        public String toString() {
            return "step{" + id + ":1} by " + FOREIGN_NAMES[layer];
        }
    }

    // ---------------------------------------------------------------- the model

    /** What the cache should hold: per slot, null (no sequence) or the token seeds it has consumed. */
    static final class Model {
        final List<List<Long>> seqs = new ArrayList<>();
        final Mutant mutant;

        Model(Kind kind, Mutant mutant) {
            this.mutant = mutant;
            for (int b = 0; b < SLOTS; b++) seqs.add(kind == Kind.CONTIGUOUS ? new ArrayList<>() : null);
        }

        boolean live(int b) {
            return b >= 0 && b < SLOTS && seqs.get(b) != null;
        }

        int len(int b) {
            return seqs.get(b).size();
        }

        List<Integer> liveIds() {
            List<Integer> l = new ArrayList<>();
            for (int b = 0; b < SLOTS; b++) if (live(b)) l.add(b);
            return l;
        }

        /** The id a join gets: the lowest free slot, or −1. */
        int free() {
            for (int b = 0; b < SLOTS; b++) if (!live(b)) return b;
            return -1;
        }

        /** The refusal of an operation on sequence b when it is not one, else null. */
        static String missing(Model m, int b) {
            if (b < 0 || b >= SLOTS) return "sequence " + b + " out of range";
            return m.live(b) ? null : "sequence " + b + " is not in the cache";
        }

        /**
         * Applies {@code op}: null when the API must do it (the model changed accordingly), else a fragment of the
         * message it must refuse it with (the model unchanged).
         */
        String apply(Op op) {
            switch (op) {
                case Add a -> {
                    int b = free();
                    if (b < 0) return "no free sequence slot";
                    seqs.set(b, new ArrayList<>());
                }
                case Step s -> {
                    for (int id : s.ids) {
                        String m = missing(this, id);
                        if (m != null) return m;
                    }
                    boolean[] seen = new boolean[SLOTS];
                    for (int i = 0; i < s.ids.length; i++) {
                        if (seen[s.ids[i]]) return "sequence " + s.ids[i] + " appears twice in one step";
                        seen[s.ids[i]] = true;
                        if (len(s.ids[i]) + s.lens[i] > CAPACITY) return "latent cache full";
                    }
                    for (int i = 0; i < s.ids.length; i++) {
                        for (int k = 0; k < s.lens[i]; k++) seqs.get(s.ids[i]).add(s.token(i, k));
                    }
                }
                case Uniform u -> {
                    for (int b = 0; b < SLOTS; b++) if (!live(b)) return "but sequence " + b + " is not in it";
                    for (int b = 0; b < SLOTS; b++) if (len(b) + u.len > CAPACITY) return "latent cache full";
                    for (int b = 0; b < SLOTS; b++) {
                        for (int k = 0; k < u.len; k++) seqs.get(b).add(u.x + 100L * b + k);
                    }
                }
                case Fork f -> {
                    String m = missing(this, f.id);
                    if (m != null) return m;
                    int child = free();
                    if (child < 0) return "no free sequence slot";
                    seqs.set(child, new ArrayList<>(seqs.get(f.id)));
                }
                case Truncate t -> {
                    String m = missing(this, t.id);
                    if (m != null) return m;
                    if (t.length < 0) return "length must be >= 0";
                    List<Long> h = seqs.get(t.id);
                    int keep = Math.min(t.length, h.size());
                    switch (mutant) {
                        case NONE -> seqs.set(t.id, new ArrayList<>(h.subList(0, keep)));
                        case FORGETS_TRUNCATE -> { }
                        case TRUNCATE_KEEPS_SUFFIX -> seqs.set(t.id, new ArrayList<>(h.subList(h.size() - keep, h.size())));
                    }
                }
                case Free f -> {
                    String m = missing(this, f.id);
                    if (m != null) return m;
                    seqs.set(f.id, null);
                }
                case Transfer t -> {
                    String m = missing(this, t.from);
                    if (m != null) return m;
                    int to = t.to;
                    if (to < 0) {
                        to = free();
                        if (to < 0) return "no free sequence slot";
                    } else {
                        m = missing(this, to);
                        if (m != null) return m;
                    }
                    seqs.set(to, new ArrayList<>(seqs.get(t.from)));
                }
                case ForeignImport f -> {
                    String m = missing(this, f.to);
                    return m != null ? m : "the file's cache is";
                }
                case ForeignStep f -> {
                    return "refused: this layer";
                }
            }
            return null;
        }
    }

    // ---------------------------------------------------------------- the generator

    /** {@code n} operations from {@code seed}, chosen against the model so that most are ones the API does. */
    static List<Op> generate(Setup setup, long seed, int n) {
        SplittableRandom rnd = new SplittableRandom(seed * 1_000_003L + 2L * setup.dtype.ordinal() + setup.kind.ordinal());
        Model m = new Model(setup.kind, Mutant.NONE);
        List<Op> ops = new ArrayList<>();
        while (ops.size() < n) {
            Op op = pick(m, rnd);
            if (op == null) continue;
            m.apply(op);
            ops.add(op);
        }
        return ops;
    }

    private static Op pick(Model m, SplittableRandom rnd) {
        List<Integer> live = m.liveIds();
        int r = rnd.nextInt(100);
        if (live.isEmpty() && r < 90) return new Add();
        if (live.isEmpty()) r = 86 + rnd.nextInt(14);
        int any = live.isEmpty() ? 0 : live.get(rnd.nextInt(live.size()));
        long x = rnd.nextLong(1L << 40) * 1000;
        if (r < 10) return new Add();
        if (r < 45) {
            List<Integer> ids = new ArrayList<>(), lens = new ArrayList<>();
            for (int b : live) {
                int room = CAPACITY - m.len(b);
                if (room == 0 || rnd.nextInt(3) == 0) continue;
                ids.add(b);
                lens.add(Math.min(room, m.len(b) == 0 || rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(6) : 1));
            }
            if (ids.isEmpty()) return m.len(any) > 0 ? new Truncate(any, rnd.nextInt(m.len(any))) : null;
            return new Step(ids.stream().mapToInt(Integer::intValue).toArray(), lens.stream().mapToInt(Integer::intValue).toArray(),
                    rnd.nextInt(OPTS.length), x);
        }
        if (r < 52) return new Uniform(rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(3) : 1, rnd.nextInt(OPTS.length), x);
        if (r < 60) return new Fork(any);
        if (r < 70) return new Truncate(any, rnd.nextInt(m.len(any) + 1));
        if (r < 76) return new Free(any);
        if (r < 86) return new Transfer(any, rnd.nextBoolean() ? -1 : live.get(rnd.nextInt(live.size())));
        // an operation the API must refuse (or, truncating past the end, do nothing)
        int gone = m.free() >= 0 ? m.free() : rnd.nextBoolean() ? SLOTS : -1;
        return switch (rnd.nextInt(9)) {
            case 0 -> new Step(live.isEmpty() ? new int[] {gone} : new int[] {any, gone}, live.isEmpty() ? new int[] {1} : new int[] {1, 1}, rnd.nextInt(OPTS.length), x);
            case 1 -> new Free(gone);
            case 2 -> new Fork(gone);
            case 3 -> new Transfer(gone, -1);
            case 4 -> new Truncate(live.isEmpty() ? gone : any, -1 - rnd.nextInt(3));
            case 5 -> live.isEmpty() ? new Add() : new Truncate(any, m.len(any) + 1 + rnd.nextInt(4));
            case 6 -> new ForeignImport(rnd.nextInt(FOREIGN.length), live.isEmpty() ? gone : any);
            case 7 -> new ForeignStep(rnd.nextInt(FOREIGN.length), live.isEmpty() ? gone : any);
            default -> live.isEmpty() ? new Add() : new Step(new int[] {any}, new int[] {CAPACITY - m.len(any) + 1 + rnd.nextInt(3)}, rnd.nextInt(OPTS.length), x);
        };
    }

    // ---------------------------------------------------------------- the reference

    /** A history replayed alone: its outputs [len, D] and its cache contents. */
    record Replay(float[] y, float[] latent, float[] rope) {
    }

    static float[] token(long seed) {
        return TestData.gaussian(seed, D);
    }

    static float[] inputs(List<Long> tokens) {
        float[] x = new float[tokens.size() * D];
        for (int t = 0; t < tokens.size(); t++) System.arraycopy(token(tokens.get(t)), 0, x, t * D, D);
        return x;
    }

    /** Replays, memoised per (dtype, options, history): a pure function of them. */
    static final class Reference {
        final CacheDtype dtype;
        final Map<String, Replay> memo = new HashMap<>();

        Reference(CacheDtype dtype) {
            this.dtype = dtype;
        }

        Replay replay(List<Long> history, int opt) {
            return memo.computeIfAbsent(opt + ":" + history, k -> {
                MlaLayer fresh = new MlaLayer(W, new JvmExecutor());
                LatentCache cache = fresh.newCache(1, CAPACITY, dtype);
                if (history.isEmpty()) return new Replay(new float[0], new float[0], new float[0]);
                float[] y = fresh.forward(cache, inputs(history), history.size(), OPTS[opt]);
                return new Replay(y, cache.latent(0), cache.ropeKey(0));
            });
        }
    }

    // ---------------------------------------------------------------- running a case

    /** Counts per operation kind, done and refused, over the cases of one setup. */
    static final class Stats {
        final Map<String, int[]> counts = new TreeMap<>();
        double maxErr;

        void count(Op op, boolean refused) {
            counts.computeIfAbsent(op.getClass().getSimpleName(), k -> new int[2])[refused ? 1 : 0]++;
        }

        int done(String kind) {
            return counts.getOrDefault(kind, new int[2])[0];
        }

        int refused(String kind) {
            return counts.getOrDefault(kind, new int[2])[1];
        }

        @Override
        public String toString() {
            StringBuilder s = new StringBuilder();
            counts.forEach((k, v) -> s.append(k).append(' ').append(v[0]).append('/').append(v[1]).append("  "));
            return s.append("(done/refused), max relative error ").append(String.format("%.2e", maxErr)).toString();
        }
    }

    /** One run of an operation list on a fresh layer and cache. */
    static final class Run {
        final Setup setup;
        final Model model;
        final Reference ref;
        final Stats stats;
        final MlaLayer layer = new MlaLayer(W, new JvmExecutor());
        final LatentCache cache;
        int files;

        Run(Setup setup, Mutant mutant, Reference ref, Stats stats, long seed) {
            this.setup = setup;
            this.model = new Model(setup.kind, mutant);
            this.ref = ref;
            this.stats = stats;
            if (setup.kind == Kind.PAGED) {
                // blocks for every slot at full length: the pool is never exhausted (PagedLayerTest covers that refusal)
                cache = layer.newPagedCache(PagedCacheSpec.builder().maxSequences(SLOTS).maxSequenceLength(CAPACITY).numBlocks(SLOTS * CAPACITY / BLOCK).blockSize(BLOCK).dtype(setup.dtype).build());
                CacheStorage.of(cache).shuffleFreeBlocks(seed);
            } else {
                cache = layer.newCache(SLOTS, CAPACITY, setup.dtype);
            }
        }

        void run(List<Op> ops) {
            for (int i = 0; i < ops.size(); i++) exec(ops.get(i), "op " + i + " " + ops.get(i));
            // the end: every live sequence decodes a token on each path
            for (int opt = 0; opt < OPTS.length; opt++) {
                List<Integer> ids = new ArrayList<>();
                for (int b : model.liveIds()) if (model.len(b) < CAPACITY) ids.add(b);
                if (ids.isEmpty()) break;
                Step s = new Step(ids.stream().mapToInt(Integer::intValue).toArray(), ids.stream().mapToInt(b -> 1).toArray(), opt, 7_000_000_000L + 1000L * opt);
                exec(s, "final decode " + s);
            }
        }

        void exec(Op op, String what) {
            String before = snapshot();
            int[] oldLens = new int[SLOTS];
            for (int b = 0; b < SLOTS; b++) oldLens[b] = model.live(b) ? model.len(b) : -1;
            int joins = model.free();
            String refusal = model.apply(op);
            stats.count(op, refusal != null);
            if (refusal != null) {
                try {
                    perform(op, joins);
                } catch (MlaException e) {
                    if (!e.getMessage().contains(refusal)) fail(what + ": refused with \"" + e.getMessage() + "\", expected \"… " + refusal + " …\"");
                    assertEquals(before, snapshot(), what + ": a refused operation changed the cache");
                    checkInvariants(what);
                    return;
                }
                fail(what + ": expected a refusal (" + refusal + "), the API did it");
            }
            float[] y;
            try {
                y = perform(op, joins);
            } catch (MlaException e) {
                throw new AssertionError(what + ": refused (" + e.getMessage() + "), the model expected it done", e);
            }
            if (op instanceof Step s) {
                for (int i = 0, at = 0; i < s.ids.length; at += s.lens[i], i++) {
                    checkOutput(what + ", sequence " + s.ids[i], s.ids[i], oldLens[s.ids[i]], s.lens[i], s.opt, y, at);
                }
            } else if (op instanceof Uniform u) {
                for (int b = 0; b < SLOTS; b++) checkOutput(what + ", sequence " + b, b, oldLens[b], u.len, u.opt, y, b * u.len);
            }
            checkInvariants(what);
        }

        /** Does op on the cache; returns a step's output (else null). {@code joins}: the id the model expects a join to get. */
        float[] perform(Op op, int joins) {
            switch (op) {
                case Add a -> assertEquals(joins, cache.addSequence(), "the id of a new sequence");
                case Step s -> {
                    float[] x = new float[Arrays.stream(s.lens).sum() * D];
                    for (int i = 0, at = 0; i < s.ids.length; i++) {
                        for (int k = 0; k < s.lens[i]; k++, at++) System.arraycopy(token(s.token(i, k)), 0, x, at * D, D);
                    }
                    return layer.forward(cache, x, s.ids, s.lens, OPTS[s.opt]);
                }
                case Uniform u -> {
                    float[] x = new float[SLOTS * u.len * D];
                    for (int b = 0; b < SLOTS; b++) {
                        for (int k = 0; k < u.len; k++) System.arraycopy(token(u.x + 100L * b + k), 0, x, (b * u.len + k) * D, D);
                    }
                    return layer.forward(cache, x, u.len, OPTS[u.opt]);
                }
                case Fork f -> assertEquals(joins, cache.fork(f.id), "the id of a fork");
                case Truncate t -> cache.truncate(t.id, t.length);
                case Free f -> cache.free(f.id);
                case Transfer t -> {
                    Path file = dir.resolve("seq-" + System.identityHashCode(this) + "-" + files++ + ".safetensors");
                    try {
                        CacheFiles.export(cache, t.from, file);
                        int to = t.to;
                        if (to < 0) {
                            to = cache.addSequence();
                            assertEquals(joins, to, "the id of a new sequence");
                        }
                        CacheFiles.importInto(cache, to, file);
                    } finally {
                        delete(file);
                    }
                }
                case ForeignImport f -> CacheFiles.importInto(cache, f.to, foreignFile(f.layer, setup.dtype));
                case ForeignStep f -> {
                    MlaLayer foreign = new MlaLayer(FOREIGN[f.layer], new JvmExecutor());
                    foreign.forward(cache, TestData.gaussian(5, foreign.config().hiddenSize()), new int[] {f.id}, new int[] {1}, OPTS[0]);
                }
            }
            return null;
        }

        void checkOutput(String what, int b, int from, int n, int opt, float[] y, int row) {
            float[] expected = ref.replay(model.seqs.get(b), opt).y;
            for (int i = 0; i < n * D; i++) {
                double e = expected[from * D + i], a = y[row * D + i], err = Math.abs(a - e) / Math.max(1, Math.abs(e));
                stats.maxErr = Math.max(stats.maxErr, err);
                if (!(err <= TOL)) {
                    fail(what + ": output of position " + (from + i / D) + ", element " + i % D + " is " + a + ", the replay of its "
                            + model.len(b) + " tokens gives " + e + " (relative error " + err + " > " + TOL + ")");
                }
            }
        }

        /** The cache holds the model's sequences, lengths and contents; the pool's counts are consistent. */
        void checkInvariants(String what) {
            for (int b = 0; b < SLOTS; b++) {
                assertEquals(model.live(b), cache.contains(b), what + ": whether sequence " + b + " is in the cache");
                if (!model.live(b)) continue;
                assertEquals(model.len(b), cache.length(b), what + ": length of sequence " + b);
                Replay r = ref.replay(model.seqs.get(b), 0);
                if (!Arrays.equals(r.latent, cache.latent(b)) || !Arrays.equals(r.rope, cache.ropeKey(b))) {
                    fail(what + ": sequence " + b + "'s cached latents or roped keys are not those of its " + model.len(b) + " tokens replayed alone");
                }
            }
            int[] uses = new int[cache.numBlocks()];
            for (int b = 0; b < SLOTS; b++) if (cache.contains(b)) for (int block : cache.blockTable(b)) uses[block]++;
            int free = 0;
            for (int k = 0; k < uses.length; k++) {
                if (cache.refCount(k) < uses[k]) fail(what + ": block " + k + " is named by " + uses[k] + " tables, its count is " + cache.refCount(k));
                // a contiguous sequence keeps its block past its length (truncate): counted, not in its table
                if (setup.kind == Kind.PAGED) assertEquals(uses[k], cache.refCount(k), what + ": reference count of block " + k);
                free += cache.refCount(k) == 0 ? 1 : 0;
            }
            assertEquals(free, cache.freeBlocks(), what + ": free blocks");
            assertEquals(layer.identity(), cache.identity(), what + ": the cache's identity");
        }

        /** Everything a refused operation must leave as it was. */
        String snapshot() {
            StringBuilder s = new StringBuilder("free ").append(cache.freeBlocks()).append(" refs [");
            for (int k = 0; k < cache.numBlocks(); k++) s.append(cache.refCount(k)).append(' ');
            s.append(']');
            for (int b = 0; b < SLOTS; b++) {
                s.append(" | ").append(b).append(": ");
                if (!cache.contains(b)) {
                    s.append('-');
                    continue;
                }
                s.append(cache.length(b)).append(' ').append(Arrays.toString(cache.blockTable(b))).append(' ')
                        .append(Arrays.hashCode(cache.latent(b))).append(' ').append(Arrays.hashCode(cache.ropeKey(b)));
            }
            return s.append(" | ").append(cache.identity()).toString();
        }
    }

    private static final Map<String, Path> FOREIGN_FILES = new HashMap<>();

    /** A file exported by FOREIGN[layer]'s cache of {@code dtype} (three tokens). */
    static synchronized Path foreignFile(int layer, CacheDtype dtype) {
        return FOREIGN_FILES.computeIfAbsent(layer + "-" + dtype, k -> {
            MlaLayer foreign = new MlaLayer(FOREIGN[layer], new JvmExecutor());
            LatentCache cache = foreign.newCache(1, CAPACITY, dtype);
            foreign.prefill(cache, TestData.gaussian(6, 3 * foreign.config().hiddenSize()), 3, AttentionPath.ABSORBED);
            Path file = dir.resolve("foreign-" + k + ".safetensors");
            CacheFiles.export(cache, 0, file);
            return file;
        });
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Runs {@code ops}: null when the property holds, else what failed. */
    static String failure(Setup setup, List<Op> ops, Mutant mutant, Reference ref, Stats stats, long seed) {
        try {
            new Run(setup, mutant, ref, stats, seed).run(ops);
            return null;
        } catch (AssertionError | RuntimeException e) {
            return e instanceof AssertionError ? e.getMessage() : e.toString();
        }
    }

    /** The smallest list found that still fails: operations removed one at a time, then made smaller, until neither helps. */
    static List<Op> shrink(Setup setup, List<Op> ops, Mutant mutant, Reference ref, long seed) {
        Stats ignored = new Stats();
        List<Op> best = new ArrayList<>(ops);
        int budget = 1000;
        for (boolean progress = true; progress && budget > 0; ) {
            progress = false;
            for (int i = best.size() - 1; i >= 0 && budget > 0; i--) {
                List<Op> fewer = new ArrayList<>(best);
                fewer.remove(i);
                budget--;
                if (failure(setup, fewer, mutant, ref, ignored, seed) != null) {
                    best = fewer;
                    progress = true;
                }
            }
            for (int i = 0; i < best.size() && budget > 0; i++) {
                for (Op smaller : best.get(i).smaller()) {
                    List<Op> candidate = new ArrayList<>(best);
                    candidate.set(i, smaller);
                    budget--;
                    if (failure(setup, candidate, mutant, ref, ignored, seed) != null) {
                        best = candidate;
                        progress = true;
                        break;
                    }
                }
            }
        }
        return best;
    }

    /** A failure, shrunk: the minimal list and what it breaks. */
    record Shrunk(List<Op> ops, String failure, int from) {
        String report(Setup setup, long seed) {
            StringBuilder s = new StringBuilder("seed " + seed + ", " + setup + ": the property fails; shrunk from " + from + " to "
                    + ops.size() + " operations (replay: -Dmla.props.seed=" + seed + "):");
            for (int i = 0; i < ops.size(); i++) s.append("\n  ").append(i).append(": ").append(ops.get(i));
            return s.append("\nfailure: ").append(failure).toString();
        }
    }

    static Shrunk check(Setup setup, long seed, int n, Mutant mutant, Stats stats) {
        Reference ref = new Reference(setup.dtype);
        List<Op> ops = generate(setup, seed, n);
        if (failure(setup, ops, mutant, ref, stats, seed) == null) return null;
        List<Op> minimal = shrink(setup, ops, mutant, ref, seed);
        return new Shrunk(minimal, failure(setup, minimal, mutant, ref, new Stats(), seed), ops.size());
    }

    static long[] seeds() {
        Long only = Long.getLong("mla.props.seed");
        if (only != null) return new long[] {only};
        return java.util.stream.LongStream.range(0, Integer.getInteger("mla.props.seeds", DEFAULT_SEEDS)).toArray();
    }

    // ---------------------------------------------------------------- the tests

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void randomOperationsKeepTheCacheAsTheModelSays(Setup setup) {
        Stats stats = new Stats();
        int n = Integer.getInteger("mla.props.ops", DEFAULT_OPS);
        for (long seed : seeds()) {
            Shrunk s = check(setup, seed, n, Mutant.NONE, stats);
            if (s != null) fail(s.report(setup, seed));
        }
        System.out.println("CachePropertiesTest " + setup + ": " + stats);
        if (seeds().length >= DEFAULT_SEEDS) {
            // the cases did what they are for: every operation done, every refusal met
            for (String kind : List.of("Add", "Step", "Uniform", "Fork", "Truncate", "Free", "Transfer")) {
                assertTrue(stats.done(kind) > 0, setup + ": no " + kind + " done: " + stats);
            }
            for (String kind : List.of("Add", "Step", "Uniform", "Fork", "Truncate", "Free", "Transfer", "ForeignImport", "ForeignStep")) {
                assertTrue(stats.refused(kind) > 0, setup + ": no " + kind + " refused: " + stats);
            }
            assertTrue(stats.done("Step") >= 100, setup + ": too few steps: " + stats);
        }
    }

    /** The property can fail: models that get truncation wrong are caught, and shrink to the few operations that show it. */
    @Test
    void theCheckerCatchesAWrongModel() {
        for (Mutant mutant : List.of(Mutant.FORGETS_TRUNCATE, Mutant.TRUNCATE_KEEPS_SUFFIX)) {
            for (Setup setup : List.of(new Setup(CacheDtype.F32, Kind.PAGED), new Setup(CacheDtype.INT8, Kind.CONTIGUOUS))) {
                Shrunk s = null;
                long seed = 0;
                for (; seed < DEFAULT_SEEDS && s == null; seed++) s = check(setup, seed, DEFAULT_OPS, mutant, new Stats());
                assertNotNull(s, mutant + " on " + setup + " passed every seed: the property is vacuous");
                String report = s.report(setup, seed - 1);
                System.out.println("CachePropertiesTest, a wrong model (" + mutant + ") caught: " + report);
                assertTrue(s.ops.size() <= 3, "shrunk to more than 3 operations: " + report);
                assertTrue(s.ops.stream().anyMatch(op -> op instanceof Truncate), report);
                assertTrue(s.failure.contains(mutant == Mutant.FORGETS_TRUNCATE ? "length of sequence" : "replayed alone"), report);
                // the list fails because of the model: the API does what the right model says
                assertNull(failure(setup, s.ops, Mutant.NONE, new Reference(setup.dtype), new Stats(), seed - 1), report);
            }
        }
    }
}
