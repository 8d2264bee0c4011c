package org.tornadomla.graph;

import java.io.Serializable;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;

/**
 * A kernel named by a method reference, e.g. {@code Rope::rotatePairs}, so that the compiler and an IDE
 * follow a graph into its kernels and a renamed or re-typed kernel is a compile error, not a lookup that
 * fails at run time. {@code K1} … {@code K20} are the shapes of kernels with 1 … 20 arguments (TornadoVM's
 * limit); their type parameters are the kernel's argument types (boxed for scalars), so
 * {@link KernelGraph#task} checks every argument against the kernel's parameter at compile time.
 *
 * <p>The interfaces are {@link Serializable} because a serializable method reference keeps the name of
 * the method it refers to ({@link SerializedLambda}): {@link #method()} recovers the kernel's
 * {@link Method} from it once per reference site, and the executors run that method (the JVM calls it;
 * TornadoVM compiles its bytecode).
 */
public interface KernelRef extends Serializable {

    /** The kernel this reference names: a public static void method. */
    default Method method() {
        return KernelResolver.method(this);
    }

    /**
     * The method reference itself, typed: {@code KernelRef.of(FlashDecode::splitKv)} gives a {@code KernelRef}
     * where a plain method reference has no target type (e.g. to pair kernels of different signatures).
     */
    static <A> K1<A> of(K1<A> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 2 arguments). */
    static <A, B> K2<A, B> of(K2<A, B> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 3 arguments). */
    static <A, B, C> K3<A, B, C> of(K3<A, B, C> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 4 arguments). */
    static <A, B, C, D> K4<A, B, C, D> of(K4<A, B, C, D> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 5 arguments). */
    static <A, B, C, D, E> K5<A, B, C, D, E> of(K5<A, B, C, D, E> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 6 arguments). */
    static <A, B, C, D, E, F> K6<A, B, C, D, E, F> of(K6<A, B, C, D, E, F> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 7 arguments). */
    static <A, B, C, D, E, F, G> K7<A, B, C, D, E, F, G> of(K7<A, B, C, D, E, F, G> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 8 arguments). */
    static <A, B, C, D, E, F, G, H> K8<A, B, C, D, E, F, G, H> of(K8<A, B, C, D, E, F, G, H> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 9 arguments). */
    static <A, B, C, D, E, F, G, H, I> K9<A, B, C, D, E, F, G, H, I> of(K9<A, B, C, D, E, F, G, H, I> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 10 arguments). */
    static <A, B, C, D, E, F, G, H, I, J> K10<A, B, C, D, E, F, G, H, I, J> of(K10<A, B, C, D, E, F, G, H, I, J> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 11 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K> K11<A, B, C, D, E, F, G, H, I, J, K> of(K11<A, B, C, D, E, F, G, H, I, J, K> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 12 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L> K12<A, B, C, D, E, F, G, H, I, J, K, L> of(K12<A, B, C, D, E, F, G, H, I, J, K, L> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 13 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L, M> K13<A, B, C, D, E, F, G, H, I, J, K, L, M> of(K13<A, B, C, D, E, F, G, H, I, J, K, L, M> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 14 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L, M, N> K14<A, B, C, D, E, F, G, H, I, J, K, L, M, N> of(K14<A, B, C, D, E, F, G, H, I, J, K, L, M, N> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 15 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> K15<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> of(K15<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 16 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> K16<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> of(K16<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 17 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> K17<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> of(K17<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 18 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> K18<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> of(K18<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 19 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> K19<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> of(K19<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> kernel) {
        return kernel;
    }

    /** The method reference itself, typed (a kernel of 20 arguments). */
    static <A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> K20<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> of(K20<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> kernel) {
        return kernel;
    }

    /** A kernel of 1 argument. */
    @FunctionalInterface
    interface K1<A> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a);
    }

    /** A kernel of 2 arguments. */
    @FunctionalInterface
    interface K2<A, B> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b);
    }

    /** A kernel of 3 arguments. */
    @FunctionalInterface
    interface K3<A, B, C> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c);
    }

    /** A kernel of 4 arguments. */
    @FunctionalInterface
    interface K4<A, B, C, D> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d);
    }

    /** A kernel of 5 arguments. */
    @FunctionalInterface
    interface K5<A, B, C, D, E> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e);
    }

    /** A kernel of 6 arguments. */
    @FunctionalInterface
    interface K6<A, B, C, D, E, F> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f);
    }

    /** A kernel of 7 arguments. */
    @FunctionalInterface
    interface K7<A, B, C, D, E, F, G> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g);
    }

    /** A kernel of 8 arguments. */
    @FunctionalInterface
    interface K8<A, B, C, D, E, F, G, H> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h);
    }

    /** A kernel of 9 arguments. */
    @FunctionalInterface
    interface K9<A, B, C, D, E, F, G, H, I> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i);
    }

    /** A kernel of 10 arguments. */
    @FunctionalInterface
    interface K10<A, B, C, D, E, F, G, H, I, J> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j);
    }

    /** A kernel of 11 arguments. */
    @FunctionalInterface
    interface K11<A, B, C, D, E, F, G, H, I, J, K> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k);
    }

    /** A kernel of 12 arguments. */
    @FunctionalInterface
    interface K12<A, B, C, D, E, F, G, H, I, J, K, L> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l);
    }

    /** A kernel of 13 arguments. */
    @FunctionalInterface
    interface K13<A, B, C, D, E, F, G, H, I, J, K, L, M> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m);
    }

    /** A kernel of 14 arguments. */
    @FunctionalInterface
    interface K14<A, B, C, D, E, F, G, H, I, J, K, L, M, N> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n);
    }

    /** A kernel of 15 arguments. */
    @FunctionalInterface
    interface K15<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o);
    }

    /** A kernel of 16 arguments. */
    @FunctionalInterface
    interface K16<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p);
    }

    /** A kernel of 17 arguments. */
    @FunctionalInterface
    interface K17<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p, Q q);
    }

    /** A kernel of 18 arguments. */
    @FunctionalInterface
    interface K18<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p, Q q, R r);
    }

    /** A kernel of 19 arguments. */
    @FunctionalInterface
    interface K19<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p, Q q, R r, S s);
    }

    /** A kernel of 20 arguments. */
    @FunctionalInterface
    interface K20<A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T> extends KernelRef {
        /** Runs the kernel (on the JVM; TornadoVM compiles the method it names instead). */
        void run(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l, M m, N n, O o, P p, Q q, R r, S s, T t);
    }
}
