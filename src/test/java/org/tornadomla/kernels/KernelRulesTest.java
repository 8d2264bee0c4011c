package org.tornadomla.kernels;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeAnnotation;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.classfile.instruction.NewMultiArrayInstruction;
import java.lang.classfile.instruction.NewObjectInstruction;
import java.lang.classfile.instruction.NewPrimitiveArrayInstruction;
import java.lang.classfile.instruction.NewReferenceArrayInstruction;
import java.lang.classfile.instruction.OperatorInstruction;
import java.lang.classfile.instruction.ThrowInstruction;
import java.lang.constant.ClassDesc;
import java.lang.reflect.AccessFlag;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Checks the bytecode of every kernel class against the rules TornadoVM imposes (docs/design.md §2), so a
 * kernel that would not compile under TornadoVM fails here, without TornadoVM.
 */
class KernelRulesTest {
    static final List<Class<?>> KERNEL_CLASSES = List.of(Norms.class, Projections.class, Rope.class, Absorb.class, CacheLayout.class,
            CacheOps.class, CacheRows.class, NaiveAttention.class, AbsorbedAttention.class, Softmax.class, OnlineSoftmax.class, Bf16.class, Fp8.class,
            Dequantize.class, Indexer.class, TopK.class, SparseAttention.class);
    static final ClassDesc PARALLEL = ClassDesc.of("uk.ac.manchester.tornado.api.annotations.Parallel");
    /** Kernel-safe helpers that only host code calls (kernels call their parts directly). */
    static final Set<String> HOST_HELPERS = Set.of("CacheRows.writeRow");
    /** TornadoVM's TaskGraph.task takes at most 20 kernel arguments. */
    static final int MAX_ARGS = 20;

    private static ClassModel model(Class<?> c) throws IOException {
        try (InputStream in = c.getResourceAsStream(c.getSimpleName() + ".class")) {
            return ClassFile.of().parse(in.readAllBytes());
        }
    }

    private static boolean isKernel(MethodModel m) {
        return m.flags().has(AccessFlag.PUBLIC) && m.flags().has(AccessFlag.STATIC)
                && m.methodTypeSymbol().returnType().descriptorString().equals("V");
    }

    /** "Class.method" of every method that kernel code calls: helpers, inlined by TornadoVM, need no @Parallel loop. */
    private static Set<String> calledFromKernelCode() throws IOException {
        Set<String> called = new java.util.HashSet<>();
        for (Class<?> c : KERNEL_CLASSES) {
            for (MethodModel m : model(c).methods()) {
                m.code().ifPresent(code -> code.forEach(e -> {
                    if (e instanceof InvokeInstruction i && i.owner().asInternalName().startsWith("org/tornadomla/kernels/")) {
                        String owner = i.owner().asInternalName();
                        called.add(owner.substring(owner.lastIndexOf('/') + 1) + "." + i.name().stringValue());
                    }
                }));
            }
        }
        return called;
    }

    @Test
    void kernelsAreStaticVoidOverPrimitivesWithParallelLoops() throws IOException {
        int kernels = 0;
        Set<String> helpers = calledFromKernelCode();
        for (Class<?> c : KERNEL_CLASSES) {
            for (MethodModel m : model(c).methods()) {
                if (!isKernel(m)) continue;
                kernels++;
                String name = c.getSimpleName() + "." + m.methodName().stringValue();
                var params = m.methodTypeSymbol().parameterList();
                assertTrue(params.size() <= MAX_ARGS, name + " has " + params.size() + " parameters, TornadoVM takes " + MAX_ARGS);
                for (ClassDesc p : params) {
                    ClassDesc base = p.isArray() ? p.componentType() : p;
                    assertTrue(base.isPrimitive() && !(p.isArray() && base.componentType() != null),
                            name + ": parameter " + p.displayName() + " is not a primitive or a primitive array");
                }
                if (helpers.contains(name) || HOST_HELPERS.contains(name)) continue;   // helpers, not kernels
                CodeModel code = m.code().orElseThrow();
                boolean parallel = code.findAttribute(Attributes.runtimeVisibleTypeAnnotations()).stream()
                        .flatMap(a -> a.annotations().stream())
                        .anyMatch(a -> a.annotation().classSymbol().equals(PARALLEL)
                                && a.targetInfo() instanceof TypeAnnotation.LocalVarTarget);
                assertTrue(parallel, name + " has no @Parallel loop in its class file");
            }
        }
        assertTrue(kernels >= 15, "found only " + kernels + " kernels");
    }

    @Test
    void kernelCodeAllocatesNothingThrowsNothingAndCallsOnlyKernelsAndMath() throws IOException {
        Set<String> allowedOwners = Set.of("java/lang/Math");
        for (Class<?> c : KERNEL_CLASSES) {
            for (MethodModel m : model(c).methods()) {
                String mn = m.methodName().stringValue();
                // class/static initialisers and Bf16's table builder and copier run on the host
                if (mn.equals("<clinit>") || mn.equals("<init>") || mn.equals("pow2Table") || mn.equals("pow2")) continue;
                String name = c.getSimpleName() + "." + mn;
                List<String> bad = new ArrayList<>();
                for (CodeElement e : m.code().orElseThrow()) {
                    switch (e) {
                        case InvokeInstruction i -> {
                            String owner = i.owner().asInternalName();
                            if (!owner.startsWith("org/tornadomla/kernels/") && !allowedOwners.contains(owner)) {
                                bad.add("calls " + owner + "." + i.name().stringValue());
                            }
                        }
                        case NewObjectInstruction n -> bad.add("allocates " + n.className().asInternalName());
                        case NewPrimitiveArrayInstruction n -> bad.add("allocates an array");
                        case NewReferenceArrayInstruction n -> bad.add("allocates an array");
                        case NewMultiArrayInstruction n -> bad.add("allocates an array");
                        case ThrowInstruction t -> bad.add("throws");
                        // TornadoVM 5.2's OpenCL code writes Java's >>> as C's signed >> (seen in TopK.selectTopK)
                        case OperatorInstruction o when o.opcode() == Opcode.IUSHR || o.opcode() == Opcode.LUSHR -> bad.add("uses >>> (unsigned shift)");
                        default -> {
                        }
                    }
                }
                assertEquals(List.of(), bad, name + " breaks the kernel rules");
            }
        }
    }

    /**
     * OpenCL C built-in function names (OpenCL 1.2 §6.12, the common ones). TornadoVM names a kernel after
     * its method; PoCL renames a kernel that shadows a built-in and TornadoVM then crashes in the driver
     * (seen with {@code rotate}).
     */
    static final Set<String> OPENCL_BUILTINS = Set.of("abs", "acos", "asin", "atan", "ceil", "clamp", "cos", "cross",
            "degrees", "distance", "dot", "exp", "fabs", "floor", "fma", "fmax", "fmin", "fract", "length", "log",
            "mad", "max", "min", "mix", "normalize", "pow", "radians", "rotate", "round", "rsqrt", "select", "sign",
            "sin", "smoothstep", "sqrt", "step", "tan", "trunc", "upsample", "shuffle", "popcount", "barrier");

    @Test
    void noKernelIsNamedAfterAnOpenCLBuiltin() throws IOException {
        for (Class<?> c : KERNEL_CLASSES) {
            for (MethodModel m : model(c).methods()) {
                if (isKernel(m)) {
                    assertTrue(!OPENCL_BUILTINS.contains(m.methodName().stringValue()),
                            c.getSimpleName() + "." + m.methodName().stringValue() + " shadows an OpenCL C built-in");
                }
            }
        }
    }

    @Test
    void theCompileTimeParallelHasTornadoVMsRetentionAndTargets() throws ClassNotFoundException {
        Class<?> p = Class.forName("uk.ac.manchester.tornado.api.annotations.Parallel");
        assertEquals(RetentionPolicy.RUNTIME, p.getAnnotation(Retention.class).value());
        assertEquals(Set.of(ElementType.LOCAL_VARIABLE, ElementType.TYPE, ElementType.TYPE_USE, ElementType.TYPE_PARAMETER),
                Set.of(p.getAnnotation(Target.class).value()));
    }
}
