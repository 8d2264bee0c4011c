/**
 * Files in and out: {@link org.tornadomla.io.OutputFiles} (every file written, atomically and never over an
 * input or a non-regular file) and {@link org.tornadomla.io.Json} (strict JSON with size limits).
 */
package org.tornadomla.io;
