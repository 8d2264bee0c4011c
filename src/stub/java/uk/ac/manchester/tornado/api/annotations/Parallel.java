/*
 * Compile-time stand-in for TornadoVM's uk.ac.manchester.tornado.api.annotations.Parallel.
 *
 * TornadoVM finds @Parallel loops by the annotation's name in the kernel's class file
 * (RuntimeVisibleTypeAnnotations on the loop variable); it never loads this class. A declaration with the
 * same name, retention and targets therefore produces the same kernel bytecode as TornadoVM's own one.
 * This file is compiled only when TornadoVM is not on the class path and is excluded from the jar.
 * It is part of TornadoMLA, not a copy of TornadoVM code.
 */
package uk.ac.manchester.tornado.api.annotations;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.LOCAL_VARIABLE, ElementType.TYPE, ElementType.TYPE_USE, ElementType.TYPE_PARAMETER})
public @interface Parallel {
}
