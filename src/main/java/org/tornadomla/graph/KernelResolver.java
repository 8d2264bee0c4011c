package org.tornadomla.graph;

import org.tornadomla.MlaException;

import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.MethodType;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Recovers kernels from method references; one lookup per reference site (its generated class). */
final class KernelResolver {
    private static final Map<Class<?>, Method> RESOLVED = new ConcurrentHashMap<>();

    private KernelResolver() {
    }

    static Method method(KernelRef ref) {
        return RESOLVED.computeIfAbsent(ref.getClass(), c -> resolve(ref));
    }

    private static Method resolve(KernelRef ref) {
        SerializedLambda lambda;
        try {
            Method writeReplace = ref.getClass().getDeclaredMethod("writeReplace");
            writeReplace.setAccessible(true);
            lambda = (SerializedLambda) writeReplace.invoke(ref);
        } catch (java.lang.reflect.InaccessibleObjectException e) {
            // on the module path: the method reference was written in a package its module does not open to this one
            throw new MlaException("kernel reference " + ref.getClass().getName() + " cannot be read: its module must open package "
                    + ref.getClass().getPackageName() + " to org.tornadomla (opens " + ref.getClass().getPackageName() + " to org.tornadomla;)");
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new MlaException("a kernel must be given as a method reference such as Rope::rotatePairs, found "
                    + ref.getClass().getName());
        }
        String owner = lambda.getImplClass().replace('/', '.');
        if (lambda.getImplMethodKind() != MethodHandleInfo.REF_invokeStatic || lambda.getImplMethodName().startsWith("lambda$")) {
            throw new MlaException("a kernel must be a method reference to a public static method, such as Rope::rotatePairs; found "
                    + (lambda.getImplMethodName().startsWith("lambda$") ? "a lambda expression in " + owner : owner + "::" + lambda.getImplMethodName()));
        }
        try {
            ClassLoader loader = ref.getClass().getClassLoader();
            Class<?> family = Class.forName(owner, false, loader);
            Class<?>[] params = MethodType.fromMethodDescriptorString(lambda.getImplMethodSignature(), loader).parameterArray();
            Method m = family.getDeclaredMethod(lambda.getImplMethodName(), params);
            if (!Modifier.isPublic(m.getModifiers()) || !Modifier.isPublic(family.getModifiers()) || m.getReturnType() != void.class) {
                throw new MlaException("kernel " + family.getSimpleName() + "." + m.getName() + " must be a public static void method of a public class");
            }
            return m;
        } catch (ReflectiveOperationException | TypeNotPresentException e) {
            throw new MlaException("kernel " + owner + "::" + lambda.getImplMethodName() + " cannot be loaded: " + e);
        }
    }
}
