package org.tornadomla.graph;

import org.tornadomla.MlaException;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Kernels paired with a replacement of the same signature: java-fast's Vector API versions of the reference
 * kernels. Both sides are method references of one {@code KN} shape, so a renamed kernel, or a replacement
 * whose parameters drift from the reference, is a compile error; the parameter types are also compared
 * exactly when the pair is added. Filled where it is made, then only read (safe to share between threads
 * once published, e.g. through a final field).
 */
public final class KernelTable {
    private final Map<Method, Method> replacements = new LinkedHashMap<>();

    /** An empty table: {@code pair(…)} fills it. */
    public KernelTable() {
    }

    /** The replacement of {@code reference}, or null when it has none. */
    public Method replacement(Method reference) {
        return replacements.get(reference);
    }

    /** Every pair, reference → replacement, in the order added. */
    public Map<Method, Method> pairs() {
        return Collections.unmodifiableMap(replacements);
    }

    /** Pairs a reference kernel of 1 arguments with its replacement of the same signature. */
    public <A> KernelTable pair(KernelRef.K1<A> reference, KernelRef.K1<A> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 2 arguments with its replacement of the same signature. */
    public <A, B> KernelTable pair(KernelRef.K2<A, B> reference, KernelRef.K2<A, B> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 3 arguments with its replacement of the same signature. */
    public <A, B, C> KernelTable pair(KernelRef.K3<A, B, C> reference, KernelRef.K3<A, B, C> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 4 arguments with its replacement of the same signature. */
    public <A, B, C, D> KernelTable pair(KernelRef.K4<A, B, C, D> reference, KernelRef.K4<A, B, C, D> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 5 arguments with its replacement of the same signature. */
    public <A, B, C, D, E> KernelTable pair(KernelRef.K5<A, B, C, D, E> reference, KernelRef.K5<A, B, C, D, E> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 6 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F> KernelTable pair(KernelRef.K6<A, B, C, D, E, F> reference, KernelRef.K6<A, B, C, D, E, F> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 7 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G> KernelTable pair(KernelRef.K7<A, B, C, D, E, F, G> reference, KernelRef.K7<A, B, C, D, E, F, G> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 8 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H> KernelTable pair(KernelRef.K8<A, B, C, D, E, F, G, H> reference, KernelRef.K8<A, B, C, D, E, F, G, H> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 9 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I> KernelTable pair(KernelRef.K9<A, B, C, D, E, F, G, H, I> reference, KernelRef.K9<A, B, C, D, E, F, G, H, I> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 10 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J> KernelTable pair(KernelRef.K10<A, B, C, D, E, F, G, H, I, J> reference, KernelRef.K10<A, B, C, D, E, F, G, H, I, J> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 11 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K> KernelTable pair(KernelRef.K11<A, B, C, D, E, F, G, H, I, J, K> reference, KernelRef.K11<A, B, C, D, E, F, G, H, I, J, K> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 12 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L> KernelTable pair(KernelRef.K12<A, B, C, D, E, F, G, H, I, J, K, L> reference, KernelRef.K12<A, B, C, D, E, F, G, H, I, J, K, L> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 13 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M> KernelTable pair(KernelRef.K13<A, B, C, D, E, F, G, H, I, J, K, L, M> reference, KernelRef.K13<A, B, C, D, E, F, G, H, I, J, K, L, M> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 14 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N> KernelTable pair(KernelRef.K14<A, B, C, D, E, F, G, H, I, J, K, L, M, N> reference, KernelRef.K14<A, B, C, D, E, F, G, H, I, J, K, L, M, N> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 15 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> KernelTable pair(KernelRef.K15<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> reference, KernelRef.K15<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 16 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> KernelTable pair(KernelRef.K16<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> reference, KernelRef.K16<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 17 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> KernelTable pair(KernelRef.K17<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> reference, KernelRef.K17<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 18 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> KernelTable pair(KernelRef.K18<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> reference, KernelRef.K18<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 19 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> KernelTable pair(KernelRef.K19<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> reference, KernelRef.K19<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> replacement) {
        return add(reference, replacement);
    }

    /** Pairs a reference kernel of 20 arguments with its replacement of the same signature. */
    public <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> KernelTable pair(KernelRef.K20<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> reference, KernelRef.K20<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> replacement) {
        return add(reference, replacement);
    }

    private KernelTable add(KernelRef reference, KernelRef replacement) {
        Method ref = reference.method(), rep = replacement.method();
        if (!Arrays.equals(ref.getParameterTypes(), rep.getParameterTypes())) {
            throw new MlaException("kernel " + rep + " cannot replace " + ref + ": the parameter types differ");
        }
        if (replacements.putIfAbsent(ref, rep) != null) throw new MlaException("kernel " + ref + " is paired twice");
        return this;
    }
}
