/**
 * Executors by name ({@link org.tornadomla.backends.Backends#create}): "java-reference", "java-fast[:N]",
 * "tornado[:B:D]". Whoever creates an executor closes it.
 */
package org.tornadomla.backends;
